import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Causal scaled dot-product attention: softmax(q @ k^T / sqrt(d), keys after the query masked
    out) @ v (the math of F.scaled_dot_product_attention(q, k, v, is_causal=True), written out: the
    installed PyTorch may predate it)."""

    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        Sq, Sk = q.size(-2), k.size(-2)
        scale = 1.0 / math.sqrt(q.size(-1))
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        future = torch.ones(Sq, Sk, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        return torch.matmul(attn, v)


def get_inputs():
    q = torch.randn(2, 12, 1024, 64)
    k = torch.randn(2, 12, 1024, 64)
    v = torch.randn(2, 12, 1024, 64)
    return [q, k, v]


def get_init_inputs():
    return []
