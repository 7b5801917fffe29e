import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise-separable convolution, 64 -> 64: depthwise Conv2d(k=5, stride=1, padding=2,
    groups=64) + BatchNorm + ReLU, then pointwise 1x1 Conv2d + BatchNorm + ReLU. BatchNorm in eval
    mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.depthwise = nn.Conv2d(64, 64, kernel_size=5, stride=1, padding=2, groups=64)
        self.pointwise = nn.Conv2d(64, 64, kernel_size=1)
        self.bn1 = nn.BatchNorm2d(64)
        self.bn2 = nn.BatchNorm2d(64)
        # Non-trivial affine parameters and running statistics, as after training.
        with torch.no_grad():
            self.bn1.weight.uniform_(0.5, 1.5)
            self.bn1.bias.uniform_(-0.5, 0.5)
            self.bn1.running_mean.uniform_(-0.5, 0.5)
            self.bn1.running_var.uniform_(0.5, 2.0)
            self.bn2.weight.uniform_(0.5, 1.5)
            self.bn2.bias.uniform_(-0.5, 0.5)
            self.bn2.running_mean.uniform_(-0.5, 0.5)
            self.bn2.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = self.bn1(self.depthwise(x))
        x = torch.relu(x)
        x = self.bn2(self.pointwise(x))
        return torch.relu(x)


def get_inputs():
    x = torch.randn(8, 64, 32, 32, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
