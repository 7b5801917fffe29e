import torch
import torch.nn as nn


class Model(nn.Module):
    """Dot product of two vectors, a scalar (0-d) result."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.dot(a, b)


def get_inputs():
    a = torch.randn(4096, dtype=torch.float32)
    b = torch.randn(4096, dtype=torch.float32)
    return [a, b]


def get_init_inputs():
    return []
