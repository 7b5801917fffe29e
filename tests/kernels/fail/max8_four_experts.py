# Top-2 routing over 4 experts with nisa.max8: max8 needs at least 8 values per partition, and the
# router has 4 logits per token (pad them to 8 with a very negative value first).
#
# entry: router_kernel
# inputs: logits=float32[128,4]
# expect-error: nkia_max8_input_size line 19
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def router_kernel(logits):
    P, E = logits.shape
    out = nl.ndarray((P, 2), dtype=logits.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, E), dtype=logits.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=logits)
    top = nl.ndarray((P, 8), dtype=logits.dtype, buffer=nl.sbuf)
    nisa.max8(dst=top, src=t)  # Mistake: 4 values per partition
    nisa.dma_copy(dst=out, src=top[:, 0:2])
    return out
