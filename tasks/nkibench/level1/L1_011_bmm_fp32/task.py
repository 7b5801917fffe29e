import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix product: out[i] = a[i] @ b[i]."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    a = torch.randn(8, 256, 256, dtype=torch.float32)
    b = torch.randn(8, 256, 256, dtype=torch.float32)
    return [a, b]


def get_init_inputs():
    return []
