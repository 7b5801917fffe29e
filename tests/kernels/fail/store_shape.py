# A transpose kernel that stores the [cols, 128] transposed tile into a [cols, cols] slice of the
# output: the destination slice kept the input's column count.
#
# entry: transpose_kernel
# inputs: x=float32[128,64]
# expect-error: err_store_dst_shape_smaller_than_other_shape line 17
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def transpose_kernel(x):
    out = nl.ndarray((64, 128), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    flipped = nl.copy(nl.transpose(tile))         # [64, 128]
    # Mistake: the slice is 64 columns wide, the transposed tile has 128.
    nl.store(out[0:64, 0:64], value=flipped)
    return out
