# A tensor-parallel kernel sums its partial result over the ranks of a replica group with
# nki.collectives.all_reduce, then lets rank 0 alone scale the total: but the rank number is a
# register the device sets when the kernel runs (one program runs on every rank), not a Python
# value the kernel's control flow can test.
#
# entry: tp_sum_kernel
# inputs: x=float32[128,512]
# target: trn2
# expect-error: err_dynamic_control_flow_not_supported line 26
#
import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tp_sum_kernel(x):
    partial = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="partial")
    total = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="total")
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.dma_copy(dst=partial, src=t)
    ncc.all_reduce(srcs=[partial], dsts=[total], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)
    if ncc.rank_id() == 0:  # Mistake
        nisa.dma_copy(dst=t, src=total)
        nisa.activation(dst=t, op=nl.copy, data=t, scale=0.5)
        nisa.dma_copy(dst=total, src=t)
    return total
