import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Bilinear(256, 256, 256): out[b, o] = sum_ij x[b, i] * weight[o, i, j] * y[b, j] + bias[o]."""

    def __init__(self):
        super().__init__()
        self.bilinear = nn.Bilinear(256, 256, 256)

    def forward(self, x, y):
        return self.bilinear(x, y)


def get_inputs():
    x = torch.randn(32, 256, dtype=torch.float32)
    y = torch.randn(32, 256, dtype=torch.float32)
    return [x, y]


def get_init_inputs():
    return []
