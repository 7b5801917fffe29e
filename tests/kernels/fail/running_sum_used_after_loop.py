# Row sums over 128-column chunks with the running sum rebound in the loop body
# (acc = nl.add(acc, ...)): that creates a new tensor local to the loop, which is then stored after
# the loop. Declare acc before the loop and update it in place: acc[...] = nl.add(acc, ...).
#
# entry: row_sum_kernel
# inputs: x=float32[128,512]
# The simulator reports the first use out of scope: the rebound acc read by the next iteration
# (line 21); the compiler, which traces the body once, reports its use after the loop.
# expect-error: err_local_variable_used_out_of_scope line 21
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def row_sum_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    for c in nl.sequential_range(F // 128):
        t = nl.load(x[:, c * 128:(c + 1) * 128])
        acc = nl.add(acc, nl.sum(t, axis=1, keepdims=True))
    nl.store(out, value=acc)  # Mistake: acc was created inside the loop body
    return out
