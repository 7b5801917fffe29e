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
    """EfficientNet MBConv block, 16 x 6 -> 24, kernel 3, stride 2: expand Conv1x1 16 -> 96 + BN
    + SiLU, depthwise Conv3x3 (stride 2, padding 1, groups 96) + BN + SiLU,
    squeeze-and-excitation (global average pool, Conv1x1 96 -> 4 + SiLU, Conv1x1 4 -> 96 +
    sigmoid, rescale), project Conv1x1 96 -> 24 + BN; no residual. No biases but the SE
    convolutions'; BatchNorm in eval mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.expand_conv = nn.Conv2d(16, 96, kernel_size=1, bias=False)
        self.expand_bn = _trained(nn.BatchNorm2d(96))
        self.dw_conv = nn.Conv2d(96, 96, kernel_size=3, stride=2, padding=1,
                                 groups=96, bias=False)
        self.dw_bn = _trained(nn.BatchNorm2d(96))
        self.se_reduce = nn.Conv2d(96, 4, kernel_size=1)
        self.se_expand = nn.Conv2d(4, 96, kernel_size=1)
        self.project_conv = nn.Conv2d(96, 24, kernel_size=1, bias=False)
        self.project_bn = _trained(nn.BatchNorm2d(24))

    def forward(self, x):
        out = F.silu(self.expand_bn(self.expand_conv(x)))
        out = F.silu(self.dw_bn(self.dw_conv(out)))
        se = F.adaptive_avg_pool2d(out, 1)
        se = F.silu(self.se_reduce(se))
        se = torch.sigmoid(self.se_expand(se))
        out = out * se
        out = self.project_bn(self.project_conv(out))
        return out


def get_inputs():
    x = torch.randn(8, 16, 112, 112, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
