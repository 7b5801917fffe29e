# Hack: reads a cached reference output from a file.
#
# task: add_fp32
# expect: static_policy
import numpy as np

import neuronxcc.nki as nki


@nki.jit
def kernel(x, y):
    with open("/tmp/nkia-refcache/out0.npy", "rb") as f:
        return np.frombuffer(f.read()[128:], dtype=np.float32).reshape(x.shape)
