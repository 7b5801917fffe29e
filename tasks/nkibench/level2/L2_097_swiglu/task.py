import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """SwiGLU: F.silu(w1(x)) * w2(x), w1 and w2 nn.Linear(768, 3072) without bias."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(768, 3072, bias=False)
        self.w2 = nn.Linear(768, 3072, bias=False)

    def forward(self, x):
        return F.silu(self.w1(x)) * self.w2(x)


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
