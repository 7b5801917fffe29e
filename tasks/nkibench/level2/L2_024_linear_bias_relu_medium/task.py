import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """relu(nn.Linear(768, 768)(x))."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(768, 768)

    def forward(self, x):
        return F.relu(self.fc(x))


def get_inputs():
    return [torch.randn(8, 128, 768, dtype=torch.float32)]


def get_init_inputs():
    return []
