import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Leaky ReLU with negative slope 0.01."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.leaky_relu(x, negative_slope=0.01)


def get_inputs():
    x = torch.randn(16, 512, 512, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
