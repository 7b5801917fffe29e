# A test task of nki-agent's verifier: an int64 input (torch.randint), which the kernel receives as
# int32; out = x * k with NumPy/PyTorch type promotion (float32 * int64 -> float32).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, k):
        return x * k


def get_inputs():
    return [torch.randn(256, 64), torch.randint(-3, 4, (256, 64))]


def get_init_inputs():
    return []
