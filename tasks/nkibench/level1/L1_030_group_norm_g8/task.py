import torch
import torch.nn as nn


class Model(nn.Module):
    """GroupNorm(8 groups, 256 channels), eps 1e-5, with a learned per-channel weight and bias."""

    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(8, 256)
        # Drawn at random instead of the ones / zeros initialisation, so that a kernel has to apply
        # them (they are kernel arguments: gn_weight, gn_bias).
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    x = torch.randn(8, 256, 16, 16, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
