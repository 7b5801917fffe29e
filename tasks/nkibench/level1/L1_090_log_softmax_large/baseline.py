# NKIBench log_softmax_large: out = F.log_softmax(x, dim=-1) for x [B, S, V] with a vocabulary-sized last axis
# (50257). x is viewed as [B*S, V]; 128 rows per tile. A row is too long for one tile, so it is
# walked in column chunks twice. Pass 1 keeps a running max and a running sum of exp(x - max)
# (the old sum is rescaled by exp(old max - new max) whenever the max grows). Pass 2 reads the
# chunks again and writes x - (max + log(sum)).
# SBUF use is one chunk plus [128, 1] statistics, whatever V is. The last row tile and the last
# column chunk are masked.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

CHUNK = 2048    # columns per tile: [128, 2048] float32 is 8 KiB per partition


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cols = x.shape[-1]
    rows = x.shape[0] * x.shape[1]
    xv = x.reshape((rows, cols))
    ov = out.reshape((rows, cols))

    P = nl.tile_size.pmax    # 128 rows per tile
    ip = nl.arange(P)[:, None]
    jf = nl.arange(CHUNK)[None, :]
    n_chunks = (cols + CHUNK - 1) // CHUNK
    for t in nl.affine_range((rows + P - 1) // P):
        i = t * P + ip
        rm = (i < rows)

        # Pass 1: running max and running sum of exp(x - max) over the column chunks.
        run_max = nl.full((P, 1), -3.0e38, dtype=nl.float32, buffer=nl.sbuf)
        run_sum = nl.zeros((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        for c in nl.sequential_range(n_chunks):
            j = c * CHUNK + jf
            m = rm & (j < cols)
            tile = nl.load(xv[i, j], mask=m)
            new_max = nl.maximum(run_max, nl.max(tile, axis=1, keepdims=True, mask=m), mask=rm)
            e = nl.exp(nl.subtract(tile, new_max, mask=m), mask=m)
            chunk_sum = nl.sum(e, axis=1, keepdims=True, mask=m)
            rescale = nl.exp(nl.subtract(run_max, new_max, mask=rm), mask=rm)   # old sum in the new scale
            run_sum[...] = nl.add(nl.multiply(run_sum, rescale, mask=rm), chunk_sum, mask=rm)
            run_max[...] = nl.copy(new_max, mask=rm)

        log_norm = nl.add(run_max, nl.log(run_sum, mask=rm), mask=rm)      # max + log(sum exp(x - max))
        # Pass 2: read the chunks again and write the result.
        for c in nl.affine_range(n_chunks):
            j = c * CHUNK + jf
            m = rm & (j < cols)
            tile = nl.load(xv[i, j], mask=m)
            result = nl.subtract(tile, log_norm, mask=m)
            nl.store(ov[i, j], value=result, mask=m)
    return out
