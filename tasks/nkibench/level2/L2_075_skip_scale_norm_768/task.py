import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Skip + scale + norm: LayerNorm(x * scale + residual), a learned per-feature scale (768),
    LayerNorm(768) eps 1e-5."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(768)
        self.scale = nn.Parameter(torch.ones(768))
        # Drawn at random instead of the ones / zeros initialisation, so that a kernel has to apply
        # them (they are kernel arguments: scale, ln_weight, ln_bias).
        with torch.no_grad():
            self.scale.uniform_(0.5, 1.5)
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x, residual):
        return self.ln(x * self.scale + residual)


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    residual = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x, residual]


def get_init_inputs():
    return []
