import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """relu(BatchNorm2d(256)(x) + residual), BatchNorm in eval mode (running statistics), eps 1e-5."""

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

    def forward(self, x, residual):
        return F.relu(self.bn(x) + residual)


def get_inputs():
    x = torch.randn(8, 256, 14, 14, dtype=torch.float32)
    residual = torch.randn(8, 256, 14, 14, dtype=torch.float32)
    return [x, residual]


def get_init_inputs():
    return []
