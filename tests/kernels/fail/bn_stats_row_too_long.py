# Layer-norm statistics with one bn_stats over 1024 columns: bn_stats reads at most 512 elements
# per partition (nl.tile_size.bn_stats_fmax); take the statistics of each 512-column chunk and
# combine them with one bn_aggr.
#
# entry: layernorm_kernel
# inputs: x=float32[128,1024]
# expect-error: err_size_of_dimension_exceed_arch_limit line 17
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def layernorm_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    stats = nisa.bn_stats(t)  # Mistake: 1024 > 512 elements per partition
    mv = nisa.bn_aggr(stats)
    rstd = nl.rsqrt(nl.add(mv[:, 1:2], 1e-5))
    y = nisa.tensor_scalar(t, op0=nl.subtract, operand0=mv[:, 0:1], op1=nl.multiply, operand1=rstd)
    nl.store(out, value=y)
    return out
