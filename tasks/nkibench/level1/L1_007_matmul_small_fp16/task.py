import torch
import torch.nn as nn


class Model(nn.Module):
    """A plain matrix product: out = a @ b, a [M, K], b [K, N]."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    a = torch.randn(256, 256, dtype=torch.float16)
    b = torch.randn(256, 256, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []
