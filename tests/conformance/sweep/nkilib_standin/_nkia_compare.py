"""The comparison nki-library's tests validate a kernel output with, written for nki-agent's numeric
run of them (numerics.py --repo library): both arrays as float32, and every element within
`atol + rtol * max|expected|` of the expected one (the largest magnitude of the whole reference,
NaN left out, not each element's own). Used inside the sandbox (references computed with NumPy)
and by nkilib_reference.py outside it (references computed with PyTorch)."""
import numpy as np


def compare(actual, expected, rtol, atol):
    """None when `actual` matches `expected`; otherwise one line saying how it does not."""
    a = np.asarray(actual, dtype=np.float32)
    b = np.asarray(expected, dtype=np.float32)
    if a.shape != b.shape:
        if a.size != b.size:
            return f"shape {a.shape} where the reference has {b.shape}"
        a = a.reshape(b.shape)  # upstream reads the output file in the reference's shape
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
        diff[same_inf] = 0.0
        finite = b[~np.isnan(b)]
        brange = float(np.max(np.abs(finite))) if finite.size else 0.0
        bound = atol + rtol * brange
        bad = ~(diff <= bound)  # NaN differences count as failures
    n_bad = int(np.count_nonzero(bad))
    if n_bad == 0:
        return None
    worst = np.unravel_index(int(np.nanargmax(np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0))), b.shape)
    return (f"{n_bad} of {b.size} elements beyond atol {atol:g} + rtol {rtol:g} x max|ref| {brange:.4g} "
            f"(= {bound:.4g}); worst at {tuple(int(i) for i in worst)}: got {float(a[worst]):.6g}, "
            f"reference {float(b[worst]):.6g}")
