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
    """EfficientNet MBConv block, 32 x 1 -> 16, kernel 3, stride 1: no expansion (ratio 1),
    depthwise Conv3x3 (stride 1, padding 1, groups 32) + BN + SiLU, squeeze-and-excitation
    (global average pool, Conv1x1 32 -> 8 + SiLU, Conv1x1 8 -> 32 + sigmoid, rescale), project
    Conv1x1 32 -> 16 + BN; no residual. No biases but the SE convolutions'; BatchNorm in eval
    mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.dw_conv = nn.Conv2d(32, 32, kernel_size=3, stride=1, padding=1,
                                 groups=32, bias=False)
        self.dw_bn = _trained(nn.BatchNorm2d(32))
        self.se_reduce = nn.Conv2d(32, 8, kernel_size=1)
        self.se_expand = nn.Conv2d(8, 32, kernel_size=1)
        self.project_conv = nn.Conv2d(32, 16, kernel_size=1, bias=False)
        self.project_bn = _trained(nn.BatchNorm2d(16))

    def forward(self, x):
        out = x
        out = F.silu(self.dw_bn(self.dw_conv(out)))
        se = F.adaptive_avg_pool2d(out, 1)
        se = F.silu(self.se_reduce(se))
        se = torch.sigmoid(self.se_expand(se))
        out = out * se
        out = self.project_bn(self.project_conv(out))
        return out


def get_inputs():
    x = torch.randn(8, 32, 112, 112, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
