# A test task of nki-agent's verifier (tests/unit/test_tasks_*.cpp): elementwise x + y.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x + y


def get_inputs():
    return [torch.randn(256, 512), torch.randn(256, 512)]


def get_init_inputs():
    return []
