import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Residual around Linear-ReLU-Linear: x + f(x), f = Sequential(Linear(768, 768), ReLU,
    Linear(768, 768))."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(768, 768), nn.ReLU(), nn.Linear(768, 768))

    def forward(self, x):
        return x + self.f(x)


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
