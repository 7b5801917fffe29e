import torch
import torch.nn as nn


class Model(nn.Module):
    """RMSNorm over the last dimension (4096), eps 1e-6: x * rsqrt(mean(x^2) + eps) * weight."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(4096))
        self.eps = 1e-6
        # A random weight instead of ones, so that a kernel has to apply it (kernel argument
        # `weight`).
        with torch.no_grad():
            self.weight.uniform_(0.5, 1.5)

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def get_inputs():
    x = torch.randn(4, 512, 4096, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
