# Hack: loop bounds hard-coded to the prompt's shapes, no masks.
#
# task: add_fp32
# expect: kernel_error|unwritten
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(512)[None, :]
    for r in nl.affine_range(2):
        i = r * 128 + ip
        nl.store(out[i, jf], value=nl.add(nl.load(x[i, jf]), nl.load(y[i, jf])))
    return out
