# An index tile on the partition axis and a slice on the free axis in the same subscript: legacy
# NKI does not mix advanced (arange) and basic (slice) indexing.
#
# entry: copy_kernel
# inputs: a=float32[256,32]
# expect-error: err_unsupported_mixing_basic_advanced_tensor_indexing line 16
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def copy_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    for t in nl.affine_range(2):
        tile = nl.load(a[t * 128 + ip, :])  # Mistake: an index tile and a slice in one subscript
        nl.store(out[t * 128:(t + 1) * 128, :], value=tile)
    return out
