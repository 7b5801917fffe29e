import torch
import torch.nn as nn
import torch.nn.functional as F


def _trained(bn):
    """Non-trivial BatchNorm affine parameters and running statistics, as after training."""
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
    return bn


class Model(nn.Module):
    """ResNet bottleneck block 256 -> 64 -> 256, stride 1: relu(BN(Conv1x1)), relu(BN(Conv3x3,
    stride 1, padding 1)), BN(Conv1x1), plus the identity, then relu. No conv biases; BatchNorm
    in eval mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(256, 64, kernel_size=1, bias=False)
        self.bn1 = _trained(nn.BatchNorm2d(64))
        self.conv2 = nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = _trained(nn.BatchNorm2d(64))
        self.conv3 = nn.Conv2d(64, 256, kernel_size=1, bias=False)
        self.bn3 = _trained(nn.BatchNorm2d(256))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x
        return F.relu(out + identity)


def get_inputs():
    x = torch.randn(8, 256, 56, 56, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
