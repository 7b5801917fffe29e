# A test task of nki-agent's verifier: a small fused operator, relu(BatchNorm2d(x) + r) in eval
# mode, whose every piece (the BatchNorm scale and shift, the residual) must reach the output.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x, r):
        return torch.relu(self.bn(x) + r)


def get_inputs():
    return [torch.randn(2, 16, 6, 5), torch.randn(2, 16, 6, 5)]


def get_init_inputs():
    return [16]
