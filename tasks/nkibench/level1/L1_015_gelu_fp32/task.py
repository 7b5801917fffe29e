import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GELU, the exact form x * Phi(x) (torch's default approximate='none')."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    x = torch.randn(16, 512, 512, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
