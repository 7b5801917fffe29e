# A ReLU written with NumPy on the loaded tile: NumPy runs on the host while the kernel is traced,
# and the tile's values exist only on the device (use nl.maximum).
#
# entry: relu_kernel
# inputs: a=float32[128,256]
# expect-error: nkia_host_math_on_tile line 18
#
#
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def relu_kernel(a):
    t = nl.load(a)
    y = np.maximum(t, 0.0)  # Mistake: NumPy on a tile
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=y)
    return out
