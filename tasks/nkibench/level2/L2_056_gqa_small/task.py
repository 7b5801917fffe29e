import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Grouped-query attention: 32 query heads share 8 key/value heads; k and v are repeated to
    the query heads (repeat_interleave), then softmax(q @ k^T / sqrt(d)) @ v."""

    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        n_rep = q.size(1) // k.size(1)
        k = k.repeat_interleave(n_rep, dim=1)
        v = v.repeat_interleave(n_rep, dim=1)
        scale = 1.0 / math.sqrt(q.size(-1))
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        attn = torch.softmax(scores, dim=-1)
        return torch.matmul(attn, v)


def get_inputs():
    q = torch.randn(2, 32, 128, 128)
    k = torch.randn(2, 8, 128, 128)
    v = torch.randn(2, 8, 128, 128)
    return [q, k, v]


def get_init_inputs():
    return []
