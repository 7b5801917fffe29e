# Transposing a whole [128, 256] tile with nl.transpose: each side of a Tensor-engine transpose is
# at most 128, so the free axis has to be split into 128-wide blocks.
#
# entry: transpose_kernel
# inputs: x=float32[128,256]
# expect-error: err_size_of_dimension_exceed_arch_limit line 15
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def transpose_kernel(x):
    out = nl.ndarray((256, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    flipped = nl.transpose(tile)  # Mistake: a 256-wide free axis in one transpose
    nl.store(out, value=nl.copy(flipped))
    return out
