import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv2d(32, 64, kernel_size=5, stride=1, padding=2) with its bias, plus an extra learned
    per-channel bias, then ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 64, kernel_size=5, stride=1, padding=2)
        self.bias = nn.Parameter(torch.randn(64))

    def forward(self, x):
        x = self.conv(x)
        x = x + self.bias.view(1, -1, 1, 1)
        return F.relu(x)


def get_inputs():
    x = torch.randn(8, 32, 32, 32, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
