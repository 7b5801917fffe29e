import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Gated (LLaMA-style) MLP: down(silu(gate(x)) * up(x)), 1024 -> 2816 -> 1024, no biases."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(1024, 2816, bias=False)
        self.up = nn.Linear(1024, 2816, bias=False)
        self.down = nn.Linear(2816, 1024, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    x = torch.randn(4, 256, 1024, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
