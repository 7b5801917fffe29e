import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(64, 128, kernel_size=5, stride=1, padding=2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    x = torch.randn(8, 64, 256, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
