import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """relu(nn.Linear(512, 512)(x))."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(512, 512)

    def forward(self, x):
        return F.relu(self.fc(x))


def get_inputs():
    return [torch.randn(32, 64, 512, dtype=torch.float32)]


def get_init_inputs():
    return []
