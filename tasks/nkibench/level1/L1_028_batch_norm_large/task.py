import torch
import torch.nn as nn


class Model(nn.Module):
    """BatchNorm2d(256) in inference (eval) mode: normalises with the running statistics."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(256)
        # Non-trivial learned affine parameters and running statistics (kernel arguments bn_weight,
        # bn_bias, bn_running_mean, bn_running_var), as after training.
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    x = torch.randn(16, 256, 16, 16, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
