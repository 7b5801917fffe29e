import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """ViT encoder block (pre-norm, 16 heads of 64, fused qkv projection, MLP 4096, exact GELU):
    x + attn_out(attention(LN1(x))), then + fc2(gelu(fc1(LN2(.))))."""

    def __init__(self):
        super().__init__()
        self.n_heads = 16
        self.head_dim = 64
        self.ln1 = nn.LayerNorm(1024)
        self.qkv = nn.Linear(1024, 3 * 1024)
        self.attn_out = nn.Linear(1024, 1024)
        self.ln2 = nn.LayerNorm(1024)
        self.fc1 = nn.Linear(1024, 4096)
        self.fc2 = nn.Linear(4096, 1024)

    def forward(self, x):
        B, S, D = x.shape
        h = self.ln1(x)
        qkv = self.qkv(h).reshape(B, S, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]                              # [B, H, S, Dh]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        attn = torch.softmax(scores, dim=-1)
        o = torch.matmul(attn, v).transpose(1, 2).reshape(B, S, D)
        x = x + self.attn_out(o)
        h = F.gelu(self.fc1(self.ln2(x)))
        return x + self.fc2(h)


def get_inputs():
    x = torch.randn(4, 197, 1024, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
