import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def attention(q, k, v, n_heads, causal=False):
    """Scaled dot-product attention of projected q [B, Sq, D] and k, v [B, Sk, D]: split
    into n_heads heads, softmax(q k^T / sqrt(Dh)) v (keys after the query masked with -inf
    when causal), heads merged back to [B, Sq, D]."""
    B, Sq, D = q.shape
    Sk = k.shape[1]
    dh = D // n_heads
    q = q.view(B, Sq, n_heads, dh).transpose(1, 2)
    k = k.view(B, Sk, n_heads, dh).transpose(1, 2)
    v = v.view(B, Sk, n_heads, dh).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(dh))
    if causal:
        mask = torch.triu(torch.ones(Sq, Sk, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
    attn = F.softmax(scores, dim=-1)
    out = torch.matmul(attn, v)
    return out.transpose(1, 2).contiguous().view(B, Sq, D)


class Model(nn.Module):
    """Pre-norm transformer encoder layer, 8 heads of 64, FFN 512 -> 2048 -> 512: x = x +
    out_proj(attention(q_proj(h), k_proj(h), v_proj(h))), h = ln1(x) (no mask); x = x +
    fc2(gelu(fc1(ln2(x)))). LayerNorm eps 1e-5, exact (erf) GELU, every Linear with its
    bias. Dropout (p = 0.1: attention probabilities, out_proj, GELU, fc2) is the identity in
    eval mode."""

    def __init__(self):
        super().__init__()
        self.n_heads = 8
        self.ln1 = nn.LayerNorm(512)
        self.ln2 = nn.LayerNorm(512)
        self.q_proj = nn.Linear(512, 512)
        self.k_proj = nn.Linear(512, 512)
        self.v_proj = nn.Linear(512, 512)
        self.out_proj = nn.Linear(512, 512)
        self.fc1 = nn.Linear(512, 2048)
        self.fc2 = nn.Linear(2048, 512)
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
        h = self.ln1(x)
        a = attention(self.q_proj(h), self.k_proj(h), self.v_proj(h), self.n_heads)
        x = x + self.dropout(self.out_proj(a))
        h = self.ln2(x)
        h = self.dropout(F.gelu(self.fc1(h)))
        return x + self.dropout(self.fc2(h))


def get_inputs():
    x = torch.randn(8, 64, 512, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
