import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Pre-norm residual MLP block: x + dropout(fc2(dropout(gelu(fc1(LayerNorm(x)))))), 768
    -> 3072 -> 768, LayerNorm eps 1e-5, exact (erf) GELU. Dropout (p = 0.1) is the identity
    in eval mode."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(768)
        self.fc1 = nn.Linear(768, 3072)
        self.fc2 = nn.Linear(3072, 768)
        self.dropout = nn.Dropout(0.1)
        # LayerNorm affines drawn at random instead of ones / zeros, so that a kernel has
        # to apply them (they are kernel arguments: ln_weight, ln_bias).
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        residual = x
        h = self.ln(x)
        h = self.dropout(F.gelu(self.fc1(h)))
        h = self.dropout(self.fc2(h))
        return h + residual


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
