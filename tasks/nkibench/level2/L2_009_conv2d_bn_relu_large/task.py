import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """relu(BatchNorm2d(128)(Conv2d(64, 128, kernel_size=3, stride=1, padding=1, bias=False)(x))),
    BatchNorm in eval mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(128)
        # Non-trivial affine parameters and running statistics, as after training.
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def get_inputs():
    x = torch.randn(8, 64, 56, 56, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
