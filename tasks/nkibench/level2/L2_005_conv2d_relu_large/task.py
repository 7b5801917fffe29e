import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv2d(3, 64, kernel_size=7, stride=2, padding=3) with its bias, plus an extra learned
    per-channel bias, then ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3)
        self.bias = nn.Parameter(torch.randn(64))

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias.view(1, -1, 1, 1)
        return F.relu(x)


def get_inputs():
    x = torch.randn(8, 3, 224, 224, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
