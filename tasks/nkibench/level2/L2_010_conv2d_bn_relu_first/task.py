import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """relu(BatchNorm2d(64)(Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)(x))),
    BatchNorm in eval mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn = nn.BatchNorm2d(64)
        # Non-trivial affine parameters and running statistics, as after training.
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def get_inputs():
    x = torch.randn(8, 3, 224, 224, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
