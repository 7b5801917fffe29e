# Loads assigned into partition slices of SBUF tiles that start at partitions 3, 16 and 100 (not
# 0/32/64/96). The compiler folds `t[a:b, :] = nl.load(...)` into the load, so the DMA writes the
# slice itself, and DMA destinations have no start-partition rule: output 0 is x shifted down by
# 3 rows (zeros above), output 1 holds y at rows 16..31 and z at rows 100..127, output 2 is
# output 0 converted to bfloat16 (round to nearest even) by the DMA on its way into a bfloat16
# tile.
#
# entry: offset_kernel
# inputs: x=float32[128,64] y=float32[16,64] z=float32[28,64]
# reference:
#   shifted = np.zeros((128, 64)); shifted[3:] = x[:125]
#   placed = np.zeros((128, 64)); placed[16:32] = y; placed[100:] = z
#   bits = shifted.astype(np.float32).view(np.uint32).astype(np.uint64)
#   bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
#   return (shifted, placed, bits.astype(np.uint32).view(np.float32))
# tolerance: atol=0 rtol=0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def offset_kernel(x, y, z):
    rows, cols = x.shape
    shifted = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    placed = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    narrow = nl.ndarray((rows, cols), dtype=nl.bfloat16, buffer=nl.shared_hbm)

    band = nl.zeros((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    band[3:rows, :] = nl.load(x[0:rows - 3, :])
    nl.store(shifted, value=band)

    slots = nl.zeros((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    slots[16:32, :] = nl.load(y)
    slots[100:rows, :] = nl.load(z)
    nl.store(placed, value=slots)

    half = nl.zeros((rows, cols), dtype=nl.bfloat16, buffer=nl.sbuf)
    half[3:rows, :] = nl.load(x[0:rows - 3, :])
    nl.store(narrow, value=half)
    return shifted, placed, narrow
