# Normalising with bn_stats/bn_aggr and passing the whole [P, 2] (mean, variance) result as the
# tensor_scalar operand: the operand is one value per partition, the mean mv[:, 0:1].
#
# entry: norm_kernel
# inputs: x=float32[128,512]
# expect-error: nkia_scalar_operand_shape line 19
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def norm_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    stats = nisa.bn_stats(t)
    mv = nisa.bn_aggr(stats)                                  # [128, 2]: mean, variance
    rstd = nl.rsqrt(nl.add(mv[:, 1:2], 1e-5))
    centred = nisa.tensor_scalar(t, op0=nl.subtract, operand0=mv)  # Mistake: the mean is mv[:, 0:1]
    nl.store(out, value=nl.multiply(centred, rstd))
    return out
