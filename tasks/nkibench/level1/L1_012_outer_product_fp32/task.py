import torch
import torch.nn as nn


class Model(nn.Module):
    """Outer product of two vectors: out[i, j] = a[i] * b[j]."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.outer(a, b)


def get_inputs():
    a = torch.randn(1024, dtype=torch.float32)
    b = torch.randn(1024, dtype=torch.float32)
    return [a, b]


def get_init_inputs():
    return []
