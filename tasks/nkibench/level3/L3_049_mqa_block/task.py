import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-query attention: 16 query heads of 64 share one key head and one value head
    (k_proj, v_proj 1024 -> 64), no biases, output projection."""

    def __init__(self):
        super().__init__()
        self.n_heads = 16
        self.head_dim = 64
        self.q_proj = nn.Linear(1024, 1024, bias=False)
        self.k_proj = nn.Linear(1024, 64, bias=False)
        self.v_proj = nn.Linear(1024, 64, bias=False)
        self.out_proj = nn.Linear(1024, 1024, bias=False)

    def forward(self, x):
        B, S, D = x.shape
        H, Dh = self.n_heads, self.head_dim
        q = self.q_proj(x).view(B, S, H, Dh).transpose(1, 2)           # [B, 16, S, 64]
        k = self.k_proj(x).view(B, S, 1, Dh).transpose(1, 2).expand(-1, H, -1, -1)
        v = self.v_proj(x).view(B, S, 1, Dh).transpose(1, 2).expand(-1, H, -1, -1)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(Dh))
        attn = torch.softmax(scores, dim=-1)
        o = torch.matmul(attn, v).transpose(1, 2).reshape(B, S, D)
        return self.out_proj(o)


def get_inputs():
    x = torch.randn(4, 256, 1024, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
