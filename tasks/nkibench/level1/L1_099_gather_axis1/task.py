import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.gather(x, 1, index)


def get_inputs():
    x = torch.randn(1024, 512, dtype=torch.float32)
    index = torch.randint(0, 512, (1024, 256), dtype=torch.int64)
    return [x, index]


def get_init_inputs():
    return []
