# The prompts' example task: scale every row of x by the inverse of its largest absolute value,
# then by a learned per-column weight w.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.empty(320).uniform_(0.5, 1.5))

    def forward(self, x):
        amax = x.abs().amax(dim=-1, keepdim=True)
        return x / (amax + 1e-6) * self.w


def get_inputs():
    return [torch.randn(4, 96, 320)]


def get_init_inputs():
    return []
