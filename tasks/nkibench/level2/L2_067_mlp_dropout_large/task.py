import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Two-layer MLP with dropout: fc2(dropout(gelu(fc1(x)))), 1024 -> 4096 -> 1024, exact GELU.
    Dropout(0.1) is the identity in eval mode, which is how the reference is run (the worker calls
    model.eval()): the output does not depend on any random draw."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1024, 4096)
        self.fc2 = nn.Linear(4096, 1024)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        x = self.dropout(F.gelu(self.fc1(x)))
        return self.fc2(x)


def get_inputs():
    x = torch.randn(4, 256, 1024, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
