# Top-8 sampling candidates over a 32000-token vocabulary with one nisa.max8 per row: max8 reads at
# most 16384 elements per partition, so take the top 8 of each chunk and max8 the candidates.
#
# entry: top8_kernel
# inputs: logits=float32[32,32000]
# expect-error: err_size_of_dimension_exceed_arch_limit line 20
#
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def top8_kernel(logits):
    B, V = logits.shape
    out = nl.ndarray((B, 8), dtype=logits.dtype, buffer=nl.shared_hbm)
    t = nl.load(logits)
    top = nisa.max8(src=t)  # Mistake: 32000 > 16384 elements per partition
    nl.store(out, value=top)
    return out
