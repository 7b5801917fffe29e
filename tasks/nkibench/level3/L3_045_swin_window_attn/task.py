import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Swin Transformer window attention on a [B, H, W, 256] feature map (H and W multiples of the
    window 7): LayerNorm, partition into 7 x 7 windows, multi-head self-attention within each
    window (8 heads of 32, fused qkv projection, no relative position bias, no shift), output
    projection, windows merged back, plus the residual."""

    def __init__(self):
        super().__init__()
        self.n_heads = 8
        self.head_dim = 32
        self.window = 7
        self.ln = nn.LayerNorm(256)
        self.qkv = nn.Linear(256, 3 * 256)
        self.proj = nn.Linear(256, 256)
        # Sharper attention and unit-scale values than the default initialisation, so that the
        # attention branch is O(1) against the residual (with the defaults it is ~7% of it)
        with torch.no_grad():
            self.qkv.weight[:512].normal_(0.0, 1.5 / math.sqrt(256))      # q and k rows
            self.qkv.weight[512:].normal_(0.0, 1.0 / math.sqrt(256))      # v rows
            self.proj.weight.normal_(0.0, 1.0 / math.sqrt(256))

    def forward(self, x):
        B, H, W, C = x.shape
        ws = self.window
        nH, nW = H // ws, W // ws
        h = self.ln(x)
        # [B, H, W, C] -> [B * nH * nW, ws * ws, C]
        win = h.view(B, nH, ws, nW, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)
        qkv = self.qkv(win).reshape(-1, ws * ws, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]                          # [B * nH * nW, heads, 49, 32]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        attn = torch.softmax(scores, dim=-1)
        o = torch.matmul(attn, v).transpose(1, 2).reshape(-1, ws * ws, C)
        o = self.proj(o)
        # windows back to [B, H, W, C]
        o = o.view(B, nH, nW, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
        return o + x


def get_inputs():
    x = torch.randn(4, 56, 56, 256, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
