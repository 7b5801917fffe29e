import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Pre-norm residual bottleneck MLP: x + fc3(gelu(fc2(gelu(fc1(LayerNorm(x)))))), 1024
    -> 256 -> 4096 -> 1024, LayerNorm eps 1e-5, exact (erf) GELU. Dropout (p = 0.1, after
    the second GELU and after fc3) is the identity in eval mode."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(1024)
        self.fc1 = nn.Linear(1024, 256)
        self.fc2 = nn.Linear(256, 4096)
        self.fc3 = nn.Linear(4096, 1024)
        self.dropout = nn.Dropout(0.1)
        # LayerNorm affines drawn at random instead of ones / zeros, so that a kernel has
        # to apply them (they are kernel arguments: ln_weight, ln_bias).
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        residual = x
        h = self.ln(x)
        h = F.gelu(self.fc1(h))
        h = self.dropout(F.gelu(self.fc2(h)))
        h = self.dropout(self.fc3(h))
        return h + residual


def get_inputs():
    x = torch.randn(8, 128, 1024, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
