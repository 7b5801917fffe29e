import torch
import torch.nn as nn


class Model(nn.Module):
    """Squeeze-and-excitation on 256 channels (reduction 16): the per-channel means of x, through
    Linear(256, 16) + relu and Linear(16, 256) + sigmoid, rescale x channel by channel."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 16)
        self.fc2 = nn.Linear(16, 256)

    def forward(self, x):
        # x: (B, C, H, W)
        scale = x.mean(dim=(2, 3))  # (B, C)
        scale = torch.relu(self.fc1(scale))
        scale = torch.sigmoid(self.fc2(scale))
        return x * scale.unsqueeze(-1).unsqueeze(-1)


def get_inputs():
    x = torch.randn(8, 256, 16, 16, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
