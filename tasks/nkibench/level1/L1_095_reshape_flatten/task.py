import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.reshape(x.shape[0], -1)


def get_inputs():
    x = torch.randn(8, 64, 32, 32, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
