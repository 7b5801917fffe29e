import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GPT-2 block (pre-norm), 12 heads of 64, MLP 768 -> 3072 -> 768: a fused QKV
    projection attn_qkv (768 -> 3 * 768, columns q | k | v, each head-major), causal softmax
    attention, x = x + attn_out(attention(ln1(x))); x = x + fc2(gelu(fc1(ln2(x)))).
    LayerNorm eps 1e-5, exact (erf) GELU, every Linear with its bias. Dropout (p = 0.1) is
    the identity in eval mode."""

    def __init__(self):
        super().__init__()
        self.n_heads = 12
        self.head_dim = 64
        self.ln1 = nn.LayerNorm(768)
        self.ln2 = nn.LayerNorm(768)
        self.attn_qkv = nn.Linear(768, 3 * 768)
        self.attn_out = nn.Linear(768, 768)
        self.fc1 = nn.Linear(768, 3072)
        self.fc2 = nn.Linear(3072, 768)
        self.dropout = nn.Dropout(0.1)
        # LayerNorm affines drawn at random instead of ones / zeros, so that a kernel has
        # to apply them (they are kernel arguments: ln1_weight, ln1_bias, ln2_weight,
        # ln2_bias).
        with torch.no_grad():
            self.ln1.weight.uniform_(0.5, 1.5)
            self.ln1.bias.uniform_(-0.5, 0.5)
            self.ln2.weight.uniform_(0.5, 1.5)
            self.ln2.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        B, S, D = x.shape
        h = self.ln1(x)
        qkv = self.attn_qkv(h).reshape(B, S, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)               # each [B, H, S, Dh]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        causal = torch.triu(torch.ones(S, S, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(causal, float("-inf"))
        attn = self.dropout(F.softmax(scores, dim=-1))
        a = torch.matmul(attn, v).transpose(1, 2).contiguous().view(B, S, D)
        x = x + self.dropout(self.attn_out(a))
        h = self.ln2(x)
        h = self.dropout(F.gelu(self.fc1(h)))
        return x + self.dropout(self.fc2(h))


def get_inputs():
    x = torch.randn(4, 256, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
