import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Two-layer MLP: fc2(gelu(fc1(x))), 4096 -> 11008 -> 4096, exact (erf) GELU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4096, 11008)
        self.fc2 = nn.Linear(11008, 4096)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def get_inputs():
    x = torch.randn(2, 512, 4096, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
