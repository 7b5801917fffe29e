# Elementwise add of two [rows, cols] tensors, 128 rows (one partition tile) at a time.
#
# entry: add_kernel
# inputs: a=float32[384,512] b=float32[384,512]
# reference: a + b
# tolerance: atol=1e-6 rtol=1e-6
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_kernel(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)

    # One row of the tile per partition, every column along the free axis.
    ip = nl.arange(nl.tile_size.pmax)[:, None]
    jf = nl.arange(cols)[None, :]

    for t in nl.affine_range(rows // nl.tile_size.pmax):
        row = t * nl.tile_size.pmax + ip
        lhs = nl.load(a[row, jf])
        rhs = nl.load(b[row, jf])
        total = nl.add(lhs, rhs)
        nl.store(out[row, jf], value=total)
    return out
