"""ml_dtypes for nki-library's tests in nki-agent's sandbox (numerics.py --repo library): Debian does
not package ml_dtypes, and nki-agent's NKI modules already make NKI's float types NumPy dtypes of
their real size (`arr.astype(nl.bfloat16)` rounds to nearest even), so the names the tests use are
those."""
import nki.language as nl

bfloat16 = nl.bfloat16
float8_e4m3fn = nl.float8_e4m3fn
float8_e5m2 = nl.float8_e5m2
float8_e4m3 = nl.float8_e4m3
