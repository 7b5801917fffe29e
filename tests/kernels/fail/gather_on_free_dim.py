# Picking each row's target logit (cross-entropy) with the label ids on the free axis,
# logits[ip, labels[ip, 0]]: runtime indices are allowed on the partition axis only (transpose the
# logits, or select with an iota == label mask).
#
# entry: target_logit_kernel
# inputs: logits=float32[128,1000] labels=int32[128,1]~uniform(0,1000)
# expect-error: err_indirect_indices_free_dim line 19
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def target_logit_kernel(logits, labels):
    out = nl.ndarray((128, 1), dtype=logits.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    lab = nl.load(labels)
    picked = nl.load(logits[ip, lab[ip, 0]])  # Mistake: runtime index on the free axis
    nl.store(out, value=picked)
    return out
