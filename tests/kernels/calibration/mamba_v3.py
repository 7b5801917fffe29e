# Mamba selective-scan layer, float32, as in mamba_v1.py (the same operation and reference). The
# seq_len-tiled kernel ("Mitigate spilling by tiling seq_len", mamba_v3) of the AWS NKI tutorial
# "Fused Mamba": mamba_v2's loops (batch > 128-channel tile > state, delta and u loaded once per
# channel tile, one [128, seq_len] accumulator stored at the end of the channel loop) with a new
# innermost `nl.static_range` loop over 512-wide seq_len tiles (the tutorial's seq_len_fsize). Per
# (state, seq tile): exp(delta * A) on the tile's slice of delta, B's and C's row slices loaded,
# delta * u and the B product by `nisa.tensor_tensor`, the scan `nisa.tensor_tensor_scan` starting
# from the carry, a [128, 1] tile (zero at first) into which each tile's last scan column is
# copied, the C product, and `+=` into the accumulator's slice. The loop-carried scan start is why
# the loop is a static_range. Published device time (neuron-profile, one NeuronCore,
# NeuronCore-v2; the tutorial does not name the instance): 27.8 ms at batch 1, channels 4096,
# seq_len 8192, state_size 16 (VectorE active 94.85%, no spill traffic).
#
# entry: mamba_v3
# inputs: delta=float32[1,256,1024]~uniform(0.01,0.1) u=float32[1,256,1024] A=float32[256,2]~uniform(-2,-0.5)
#   B=float32[1,2,1024] C=float32[1,2,1024]
# reference:
#   dA = np.exp(delta[:, :, None, :] * A[None, :, :, None])
#   dBu = delta[:, :, None, :] * B[:, None, :, :] * u[:, :, None, :]
#   h = np.zeros(dA.shape[:-1])
#   y = np.zeros(delta.shape)
#   for t in range(delta.shape[-1]):
#     h = dA[..., t] * h + dBu[..., t]
#     y[..., t] = (C[:, None, :, t] * h).sum(axis=-1)
#   return y
# tolerance: atol=1e-5 rtol=1e-4
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_C = 128  # channels per tile: the partitions
TILE_T = 512  # seq_len per tile: the tutorial's seq_len_fsize


@nki.jit
def mamba_v3(delta, u, A, B, C):
    batch, channels, seq_len = delta.shape
    _, state_size = A.shape
    assert channels % TILE_C == 0, "channels must be a multiple of 128"
    assert seq_len % TILE_T == 0, "seq_len must be a multiple of 512"
    out = nl.ndarray((batch, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)

    for b in nl.affine_range(batch):
        for ct in nl.affine_range(channels // TILE_C):
            c0 = ct * TILE_C
            acc = nl.zeros((nl.par_dim(TILE_C), seq_len), dtype=delta.dtype)
            d_t = nl.load(delta[b, c0:c0 + TILE_C, 0:seq_len])  # reused by every state
            u_t = nl.load(u[b, c0:c0 + TILE_C, 0:seq_len])
            for s in nl.affine_range(state_size):
                a_t = nl.load(A[c0:c0 + TILE_C, s:s + 1])
                h_last = nl.zeros((nl.par_dim(TILE_C), 1), dtype=delta.dtype)  # the scan's carry
                for tt in nl.static_range(seq_len // TILE_T):
                    t0 = tt * TILE_T
                    dA = nisa.activation(op=nl.exp, data=d_t[0:TILE_C, t0:t0 + TILE_T], scale=a_t)  # steps 1, 2

                    b_row = nl.load(B[b, s:s + 1, t0:t0 + TILE_T])
                    du = nisa.tensor_tensor(d_t[0:TILE_C, t0:t0 + TILE_T], u_t[0:TILE_C, t0:t0 + TILE_T],
                                            op=nl.multiply)  # step 3
                    dBu = nisa.tensor_tensor(du, b_row.broadcast_to((TILE_C, TILE_T)), op=nl.multiply)

                    h = nisa.tensor_tensor_scan(dA, dBu, initial=h_last, op0=np.multiply, op1=np.add)  # step 4
                    h_last[...] = h[0:TILE_C, TILE_T - 1:TILE_T]  # copied into the carry tile

                    c_row = nl.load(C[b, s:s + 1, t0:t0 + TILE_T])
                    hc = nisa.tensor_tensor(h, c_row.broadcast_to((TILE_C, TILE_T)), op=nl.multiply)  # step 5
                    acc[0:TILE_C, t0:t0 + TILE_T] += hc  # step 6
            nl.store(out[b, c0:c0 + TILE_C, 0:seq_len], value=acc[0:TILE_C, 0:seq_len])
    return out
