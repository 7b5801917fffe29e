# A test task of nki-agent's verifier: nn.LayerNorm with learned weight and bias, which must reach
# the kernel as arguments (ln_weight, ln_bias).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features, eps=1e-5)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(128, 256)]


def get_init_inputs():
    return [256]
