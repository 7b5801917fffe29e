# A per-row offset materialised with nisa.iota as int32 and passed straight as the activation
# bias: the bias must be a float32/float16/bfloat16 tile (nl.copy(offs, dtype=nl.float32)).
#
# entry: decay_kernel
# inputs: x=float32[128,64]
# expect-error: err_activation_bias_invalid_type line 19
#
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def decay_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    ip = nl.arange(128)[:, None]
    offs = nisa.iota(ip, dtype=nl.int32)                   # [128, 1]: 0, 1, ..., 127
    y = nisa.activation(op=nl.exp, data=t, bias=offs, scale=-1.0)  # Mistake: int32 bias
    nl.store(out, value=y)
    return out
