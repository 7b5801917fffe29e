import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D average pooling, kernel 3, stride 1, zero padding 1 counted in the average (count_include_pad=True, the default)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    x = torch.randn(8, 64, 32, 32, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
