import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Two-layer MLP: fc2(gelu(fc1(x))), 1024 -> 4096 -> 1024, exact (erf) GELU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1024, 4096)
        self.fc2 = nn.Linear(4096, 1024)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def get_inputs():
    x = torch.randn(4, 256, 1024, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
