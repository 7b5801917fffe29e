import torch
import torch.nn as nn


class Model(nn.Module):
    """Rotary position embedding: x * cos + rotate_half(x) * sin, where rotate_half(x) is
    cat([-x2, x1]) of the two halves of the last dimension; cos and sin broadcast over batch and
    heads."""

    def __init__(self):
        super().__init__()

    def forward(self, x, cos, sin):
        x1 = x[..., :x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        rotated = torch.cat([-x2, x1], dim=-1)
        return x * cos + rotated * sin


def get_inputs():
    x = torch.randn(4, 32, 128, 128, dtype=torch.float32)
    cos = torch.randn(1, 1, 128, 128, dtype=torch.float32)
    sin = torch.randn(1, 1, 128, 128, dtype=torch.float32)
    return [x, cos, sin]


def get_init_inputs():
    return []
