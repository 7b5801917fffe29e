import torch
import torch.nn as nn


class Model(nn.Module):
    """2-D max pooling, kernel 2, stride 2, no padding."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    x = torch.randn(8, 128, 32, 32, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
