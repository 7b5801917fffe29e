import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """softmax(q @ k^T / sqrt(d)) @ v with dropout on the attention weights. The verifier runs the
    model in eval mode, where nn.Dropout is the identity."""

    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        attn = torch.softmax(scores, dim=-1)
        attn = self.dropout(attn)
        return torch.matmul(attn, v)


def get_inputs():
    q = torch.randn(4, 12, 256, 64)
    k = torch.randn(4, 12, 256, 64)
    v = torch.randn(4, 12, 256, 64)
    return [q, k, v]


def get_init_inputs():
    return []
