import torch
import torch.nn as nn


class Model(nn.Module):
    """ShuffleNet unit core: relu(BatchNorm2d(Conv2d(128, 128, 1, groups=4)(x))), then a channel shuffle
    over 4 groups. BatchNorm in eval mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(128, 128, 1, groups=4)
        self.bn = nn.BatchNorm2d(128)
        self.groups = 4
        # Non-trivial affine parameters and running statistics, as after training.
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        B, C, H, W = x.shape
        x = x.view(B, self.groups, C // self.groups, H, W)
        x = x.transpose(1, 2).contiguous()
        return x.view(B, C, H, W)


def get_inputs():
    x = torch.randn(8, 128, 16, 16, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
