import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """MaxPool2d(2, stride 2, padding 1)(relu(Conv2d(64, 64, 3, stride 1, padding 1)(x)))"""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2, padding=1)

    def forward(self, x):
        return self.pool(F.relu(self.conv(x)))


def get_inputs():
    x = torch.randn(8, 64, 32, 32, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
