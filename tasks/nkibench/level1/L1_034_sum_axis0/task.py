import torch
import torch.nn as nn


class Model(nn.Module):
    """Column sums: sum over dim 0."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=0)


def get_inputs():
    x = torch.randn(1024, 512, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
