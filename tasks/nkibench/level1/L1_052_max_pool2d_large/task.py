import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    x = torch.randn(16, 64, 112, 112, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
