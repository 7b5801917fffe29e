# A tensor-parallel kernel sums its partial result over the ranks of a replica group with
# nki.collectives.all_reduce: nki-agent simulates one rank (and the two cores of LNC=2), not the
# other devices of a replica group, and refuses the collective by name.
#
# entry: tp_sum_kernel
# inputs: x=float32[128,512]
# target: trn2
# expect-error: nkia_multicore_not_modelled line 24
#
import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tp_sum_kernel(x):
    partial = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    total = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.dma_copy(dst=partial, src=t)
    ncc.all_reduce(srcs=[partial], dsts=[total], replica_group=ncc.ReplicaGroup([[0, 1]]), op=nl.add)  # Mistake
    return total
