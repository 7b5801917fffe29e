# Newton iterations for 1/sqrt(a) that continue "while the largest update is above a tolerance":
# a classic while loop on a runtime value may skip its first iteration, which NKI cannot express
# (run a fixed number of iterations, or use the do-while form).
#
# entry: rsqrt_kernel
# inputs: a=float32[1,128]~uniform(1,2)
# expect-error: err_while_loop_requires_unconditional_entry line 24
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

MAX_ITERS = 8
TOL = 1e-6


@nki.jit
def rsqrt_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    y = nl.full(a.shape, 1.0, dtype=nl.float32)
    step = nl.full((1, 1), 1.0, dtype=nl.float32)
    it = 0
    while it < MAX_ITERS and step > TOL:  # Mistake: step is a runtime value
        y_new = y * (1.5 - 0.5 * t * y * y)
        step[...] = nl.max(nl.abs(y_new - y), axis=1, keepdims=True)
        y[...] = y_new
        it += 1
    nl.store(out, value=y)
    return out
