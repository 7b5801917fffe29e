import torch
import torch.nn as nn


class Model(nn.Module):
    """ViT patch embedding: Conv2d(3, 768, kernel_size=16, stride=16) over a 224 x 224 image, the
    196 patch tokens with a learned cls token in front, plus a learned position embedding
    (197 positions), then LayerNorm."""

    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, 768, kernel_size=16, stride=16)
        self.cls_token = nn.Parameter(torch.randn(1, 1, 768))
        self.pos_embed = nn.Parameter(torch.randn(1, 197, 768))
        self.norm = nn.LayerNorm(768)

    def forward(self, x):
        B = x.shape[0]
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2)      # [B, 196, 768]
        tokens = torch.cat([self.cls_token.expand(B, -1, -1), tokens], dim=1)
        tokens = tokens + self.pos_embed
        return self.norm(tokens)


def get_inputs():
    x = torch.randn(8, 3, 224, 224, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
