# A running (prefix) sum of 128-column chunk totals in an affine_range loop: iteration c reads the
# total that iteration c - 1 wrote, a loop-carried dependency (use nl.sequential_range).
#
# entry: prefix_sum_kernel
# inputs: x=float32[128,512]
# expect-error: nkia_affine_range_carried_dependency line 20
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def prefix_sum_kernel(x):
    P, F = x.shape
    C = F // 128
    out = nl.ndarray((P, C), dtype=x.dtype, buffer=nl.shared_hbm)
    run = nl.zeros((P, C + 1), dtype=nl.float32, buffer=nl.sbuf)
    for c in nl.affine_range(C):
        t = nl.load(x[:, c * 128:(c + 1) * 128])
        s = nl.sum(t, axis=1, keepdims=True)
        run[:, c + 1:c + 2] = nl.add(run[:, c:c + 1], s)  # Mistake: reads iteration c - 1's write
    nl.store(out, value=nl.copy(run[:, 1:C + 1]))
    return out
