"""Channel shuffle (ShuffleNet), one kernel: x [N, C, *spatial] viewed as [N, g, C/g, *spatial],
axes 1 and 2 swapped, made contiguous, viewed back as [N, C, *spatial]."""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512


@nki.jit
def channel_shuffle(x, groups):
    """out[n, j * groups + i] = x[n, i * (C / groups) + j] for i < groups, j < C / groups.

    Group i's channels are loaded onto the partitions (128 at a time) and stored with a partition
    stride of `groups` into the output channels i, i + groups, i + 2 * groups, ..."""
    N, C = x.shape[0], x.shape[1]
    S = math.prod(x.shape[2:])
    assert C % groups == 0, "channel_shuffle: channels must divide into groups"
    Cg = C // groups
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, C, S))
    o3 = out.reshape((N, C, S))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for n in nl.affine_range(N):
        for i in nl.affine_range(groups):
            for jt in nl.affine_range(math.ceil(Cg / TILE_P)):
                j = jt * TILE_P + ip                       # channel within the group
                for s in nl.affine_range(math.ceil(S / TILE_F)):
                    f = s * TILE_F + jf
                    valid = (j < Cg) & (f < S)
                    t = nl.load(x3[n, i * Cg + j, f], mask=valid)
                    nl.store(o3[n, j * groups + i, f], value=t, mask=valid)
    return out
