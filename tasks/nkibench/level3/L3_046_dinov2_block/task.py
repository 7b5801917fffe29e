import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """DINOv2-style ViT block (pre-norm, 12 heads of 64, MLP 3072, GELU) with a learned
    per-channel layer scale on each branch: x + ls1 * attn(LN1(x)), then + ls2 * mlp(LN2(.))."""

    def __init__(self):
        super().__init__()
        self.n_heads = 12
        self.head_dim = 64
        self.ln1 = nn.LayerNorm(768)
        self.qkv = nn.Linear(768, 3 * 768)
        self.attn_out = nn.Linear(768, 768)
        self.ln2 = nn.LayerNorm(768)
        self.fc1 = nn.Linear(768, 3072)
        self.fc2 = nn.Linear(3072, 768)
        # DINOv2's layer scale, initialised to 1e-4 as upstream; the verifier draws it from
        # U(0.5, 1.5) (task.toml), or a kernel that returns x alone would pass
        self.ls1 = nn.Parameter(torch.ones(768) * 1e-4)
        self.ls2 = nn.Parameter(torch.ones(768) * 1e-4)

    def forward(self, x):
        B, S, D = x.shape
        h = self.ln1(x)
        qkv = self.qkv(h).reshape(B, S, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]                              # [B, H, S, Dh]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        attn = torch.softmax(scores, dim=-1)
        o = torch.matmul(attn, v).transpose(1, 2).reshape(B, S, D)
        x = x + self.ls1 * self.attn_out(o)
        h = F.gelu(self.fc1(self.ln2(x)))
        return x + self.ls2 * self.fc2(h)


def get_inputs():
    x = torch.randn(8, 197, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
