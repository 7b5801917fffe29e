import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Two-layer MLP in float16: fc2(gelu(fc1(x))), 768 -> 3072 -> 768, exact (erf) GELU. Float16
    input and weights. Each op rounds its result to float16, as eager PyTorch does on a device; a
    matmul accumulates in float32 and rounds once (as the Tensor engine does; CPU torch has no
    float16 matmul), the GELU is computed in float32 and rounded."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(768, 3072).half()
        self.fc2 = nn.Linear(3072, 768).half()

    def forward(self, x):
        h = F.linear(x.float(), self.fc1.weight.float(), self.fc1.bias.float()).to(x.dtype)
        h = F.gelu(h.float()).to(x.dtype)
        return F.linear(h.float(), self.fc2.weight.float(), self.fc2.bias.float()).to(x.dtype)


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
