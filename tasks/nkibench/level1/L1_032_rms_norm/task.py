import torch
import torch.nn as nn


class Model(nn.Module):
    """RMSNorm over the last dimension (768), eps 1e-6: x * rsqrt(mean(x^2) + eps) * weight.
    The weight stays at its initial value, ones (the task's w = 1), but is still a kernel argument."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(768))
        self.eps = 1e-6

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
