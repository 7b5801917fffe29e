import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """RMSNorm over the last dimension: weight * (x * rsqrt(mean(x^2) + eps))."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class Model(nn.Module):
    """Pre-norm residual gated (LLaMA SwiGLU) MLP: x + down(silu(gate(n)) * up(n)), n =
    RMSNorm(x) (eps 1e-6, learned weight), gate / up Linear 4096 -> 11008, down 11008 ->
    4096, no biases."""

    def __init__(self):
        super().__init__()
        self.norm = RMSNorm(4096)
        self.gate = nn.Linear(4096, 11008, bias=False)
        self.up = nn.Linear(4096, 11008, bias=False)
        self.down = nn.Linear(11008, 4096, bias=False)
        # The RMSNorm weight drawn at random instead of ones, so that a kernel has to apply it
        # (a kernel argument: norm_weight).
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)

    def forward(self, x):
        residual = x
        n = self.norm(x)
        return residual + self.down(F.silu(self.gate(n)) * self.up(n))


def get_inputs():
    x = torch.randn(2, 256, 4096, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
