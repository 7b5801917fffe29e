import torch
import torch.nn as nn


class Model(nn.Module):
    """ViT patch embedding: Conv2d(3, 1024, kernel_size=16, stride=16) over a 384 x 384 image, the
    576 patch tokens with a learned cls token in front, plus a learned position embedding
    (577 positions), then LayerNorm."""

    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, 1024, kernel_size=16, stride=16)
        self.cls_token = nn.Parameter(torch.randn(1, 1, 1024))
        self.pos_embed = nn.Parameter(torch.randn(1, 577, 1024))
        self.norm = nn.LayerNorm(1024)

    def forward(self, x):
        B = x.shape[0]
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2)      # [B, 576, 1024]
        tokens = torch.cat([self.cls_token.expand(B, -1, -1), tokens], dim=1)
        tokens = tokens + self.pos_embed
        return self.norm(tokens)


def get_inputs():
    x = torch.randn(8, 3, 384, 384, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
