# A legacy block tensor (KT, par_dim(128), N) in a current-dialect kernel: block dimensions are
# gone from the current dialect; put the partitions first, (128, KT, N), and index [:, k, :].
#
# entry: block_sum_kernel
# inputs: x=float32[256,256]
# expect-error: err_leading_dimension_of_tensor_must_be_partition line 17
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def block_sum_kernel(x):
    K, N = x.shape
    KT = K // 128
    out = nl.ndarray((128, N), dtype=x.dtype, buffer=nl.shared_hbm)
    blocks = nl.ndarray((KT, nl.par_dim(128), N), dtype=x.dtype, buffer=nl.sbuf)  # Mistake: block dims
    for k in range(KT):
        nisa.dma_copy(dst=blocks[k], src=x[k * 128:(k + 1) * 128, :])
    s = nl.ndarray((128, N), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s, data1=blocks[0], data2=blocks[1], op=nl.add)
    nisa.dma_copy(dst=out, src=s)
    return out
