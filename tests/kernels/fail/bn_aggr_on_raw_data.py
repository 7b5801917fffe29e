# Layer-norm statistics with bn_aggr applied to the data tile itself, skipping bn_stats: bn_aggr
# combines (count, mean, M2) triples, and 500 columns of data are no such thing.
#
# entry: layernorm_kernel
# inputs: x=float32[128,500]
# expect-error: nkia_bn_aggr_stats_size line 16
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def layernorm_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    mv = nisa.bn_aggr(t)  # Mistake: nisa.bn_aggr(nisa.bn_stats(t))
    mean = mv[:, 0:1]
    rstd = nl.rsqrt(nl.add(mv[:, 1:2], 1e-5))
    y = nisa.tensor_scalar(t, op0=nl.subtract, operand0=mean, op1=nl.multiply, operand1=rstd)
    nl.store(out, value=y)
    return out
