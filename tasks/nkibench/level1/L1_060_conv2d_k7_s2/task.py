import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    x = torch.randn(8, 3, 224, 224, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
