import torch
import torch.nn as nn


class Model(nn.Module):
    """dropout(LayerNorm(768)(x)), p = 0.1. The verifier runs the reference in eval mode
    (model.eval()), where dropout is the identity: the output is the LayerNorm alone."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(768)
        self.dropout = nn.Dropout(0.1)
        # Drawn at random instead of the ones / zeros initialisation, so that a kernel has to apply
        # them (they are kernel arguments: ln_weight, ln_bias).
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.dropout(self.ln(x))


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
