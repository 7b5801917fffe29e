import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Two-layer MLP: x + fc2(gelu(fc1(x))), 768 -> 3072 -> 768, exact (erf) GELU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(768, 3072)
        self.fc2 = nn.Linear(3072, 768)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
