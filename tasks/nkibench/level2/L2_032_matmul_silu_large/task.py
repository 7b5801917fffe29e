import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """silu(nn.Linear(4096, 11008, bias=False)(x))."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4096, 11008, bias=False)

    def forward(self, x):
        return F.silu(self.fc(x))


def get_inputs():
    return [torch.randn(8, 1024, 4096, dtype=torch.float32)]


def get_init_inputs():
    return []
