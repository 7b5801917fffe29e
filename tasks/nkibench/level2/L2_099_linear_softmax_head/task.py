import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A language-model output head: softmax over GPT-2's vocabulary (50257) of
    nn.Linear(768, 50257, bias=False)(x)."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(768, 50257, bias=False)

    def forward(self, x):
        return F.softmax(self.head(x), dim=-1)


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
