import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Weighted residual: alpha * x + (1 - alpha) * linear(x), linear = nn.Linear(768, 768). alpha
    is a learned 0-d parameter (initialised to 0.5; a kernel argument, so a kernel must read it)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(768, 768)
        self.alpha = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        return self.alpha * x + (1 - self.alpha) * self.linear(x)


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
