# Mamba selective-scan layer, float32, as in mamba_v1.py (the same operation and reference). The
# loop-reordered kernel ("Minimizing data reloading by loop reordering", mamba_v2) of the AWS NKI
# tutorial "Fused Mamba": loops batch > 128-channel tile > state; the delta and u tiles are loaded
# once per channel tile, outside the state loop, and reused by every state; the channel loops are
# fused, so the accumulator is one [128, seq_len] tile declared in the channel loop and stored at
# its end. Per state: A's column, B's and C's rows are loaded; exp(delta * A) is one
# `nisa.activation`, then two `nisa.tensor_tensor` (delta * u, times B broadcast), one
# `nisa.tensor_tensor_scan` from 0, one `nisa.tensor_tensor` with C broadcast, and `+=`.
# Published device times (neuron-profile, one NeuronCore, NeuronCore-v2; the tutorial does not name
# the instance): 1.61 ms at batch 1, channels 4096, seq_len 512, state_size 16 (VectorE active
# 99.63%), and 53.33 ms at seq_len 8192 (VectorE active 58.93%, with SBUF spill and reload traffic).
#
# entry: mamba_v2
# inputs: delta=float32[1,256,256]~uniform(0.01,0.1) u=float32[1,256,256] A=float32[256,4]~uniform(-2,-0.5)
#   B=float32[1,4,256] C=float32[1,4,256]
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


@nki.jit
def mamba_v2(delta, u, A, B, C):
    batch, channels, seq_len = delta.shape
    _, state_size = A.shape
    assert channels % TILE_C == 0, "channels must be a multiple of 128"
    out = nl.ndarray((batch, channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)

    for b in nl.affine_range(batch):
        for ct in nl.affine_range(channels // TILE_C):
            c0 = ct * TILE_C
            acc = nl.zeros((nl.par_dim(TILE_C), seq_len), dtype=delta.dtype)
            d_t = nl.load(delta[b, c0:c0 + TILE_C, 0:seq_len])  # reused by every state
            u_t = nl.load(u[b, c0:c0 + TILE_C, 0:seq_len])
            for s in nl.affine_range(state_size):
                a_t = nl.load(A[c0:c0 + TILE_C, s:s + 1])
                dA = nisa.activation(op=nl.exp, data=d_t, scale=a_t)  # steps 1 and 2

                b_row = nl.load(B[b, s:s + 1, 0:seq_len])
                du = nisa.tensor_tensor(d_t, u_t, op=nl.multiply)  # step 3
                dBu = nisa.tensor_tensor(du, b_row.broadcast_to((TILE_C, seq_len)), op=nl.multiply)

                h = nisa.tensor_tensor_scan(dA, dBu, initial=0.0, op0=np.multiply, op1=np.add)  # step 4

                c_row = nl.load(C[b, s:s + 1, 0:seq_len])
                hc = nisa.tensor_tensor(h, c_row.broadcast_to((TILE_C, seq_len)), op=nl.multiply)  # step 5
                acc[0:TILE_C, 0:seq_len] += hc  # step 6
            nl.store(out[b, c0:c0 + TILE_C, 0:seq_len], value=acc[0:TILE_C, 0:seq_len])
    return out
