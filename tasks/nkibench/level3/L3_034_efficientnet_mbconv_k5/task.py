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
    """EfficientNet MBConv block, 40 x 6 -> 80, kernel 5, stride 2: expand Conv1x1 40 -> 240 +
    BN + SiLU, depthwise Conv5x5 (stride 2, padding 2, groups 240) + BN + SiLU,
    squeeze-and-excitation (global average pool, Conv1x1 240 -> 10 + SiLU, Conv1x1 10 -> 240 +
    sigmoid, rescale), project Conv1x1 240 -> 80 + BN; no residual. No biases but the SE
    convolutions'; BatchNorm in eval mode (running statistics)."""

    def __init__(self):
        super().__init__()
        self.expand_conv = nn.Conv2d(40, 240, kernel_size=1, bias=False)
        self.expand_bn = _trained(nn.BatchNorm2d(240))
        self.dw_conv = nn.Conv2d(240, 240, kernel_size=5, stride=2, padding=2,
                                 groups=240, bias=False)
        self.dw_bn = _trained(nn.BatchNorm2d(240))
        self.se_reduce = nn.Conv2d(240, 10, kernel_size=1)
        self.se_expand = nn.Conv2d(10, 240, kernel_size=1)
        self.project_conv = nn.Conv2d(240, 80, kernel_size=1, bias=False)
        self.project_bn = _trained(nn.BatchNorm2d(80))

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
    x = torch.randn(8, 40, 28, 28, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
