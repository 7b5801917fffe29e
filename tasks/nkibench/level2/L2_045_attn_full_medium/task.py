import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """softmax(q @ k^T * scale + mask) @ v, scale = 1 / sqrt(d), with an additive attention mask
    [B, 1, 1, S] broadcast over the heads and the query positions."""

    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, mask):
        scale = 1.0 / math.sqrt(q.size(-1))
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        scores = scores + mask
        attn = torch.softmax(scores, dim=-1)
        return torch.matmul(attn, v)


def get_inputs():
    q = torch.randn(4, 12, 128, 64)
    k = torch.randn(4, 12, 128, 64)
    v = torch.randn(4, 12, 128, 64)
    # The prompt's mask is all zeros (no padding); the verifier draws it from U(-1, 0) (task.toml),
    # so a kernel that drops the mask fails.
    mask = torch.zeros(4, 1, 1, 128)
    return [q, k, v, mask]


def get_init_inputs():
    return []
