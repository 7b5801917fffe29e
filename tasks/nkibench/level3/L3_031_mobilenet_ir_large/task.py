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
    """MobileNetV2 inverted residual block, 96 x 6 -> 160, stride 2: expand Conv1x1 96 -> 576 +
    BN + ReLU6, depthwise Conv3x3 (stride 2, padding 1, groups 576) + BN + ReLU6, project
    Conv1x1 576 -> 160 + BN (linear bottleneck); no residual (96 != 160, stride 2). No conv
    biases; BatchNorm in eval mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.expand_conv = nn.Conv2d(96, 576, kernel_size=1, bias=False)
        self.expand_bn = _trained(nn.BatchNorm2d(576))
        self.dw_conv = nn.Conv2d(576, 576, kernel_size=3, stride=2, padding=1, groups=576,
                                 bias=False)
        self.dw_bn = _trained(nn.BatchNorm2d(576))
        self.project_conv = nn.Conv2d(576, 160, kernel_size=1, bias=False)
        self.project_bn = _trained(nn.BatchNorm2d(160))

    def forward(self, x):
        out = F.relu6(self.expand_bn(self.expand_conv(x)))
        out = F.relu6(self.dw_bn(self.dw_conv(out)))
        out = self.project_bn(self.project_conv(out))
        return out


def get_inputs():
    x = torch.randn(8, 96, 14, 14, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
