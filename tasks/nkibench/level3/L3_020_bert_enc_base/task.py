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
    """BERT encoder layer (post-norm), 12 heads of 64, FFN 768 -> 3072 -> 768: x = ln1(x +
    out_proj(attention(q_proj(x), k_proj(x), v_proj(x)))) (no mask); x = ln2(x +
    fc2(gelu(fc1(x)))). LayerNorm eps 1e-5, exact (erf) GELU, every Linear with its bias.
    Dropout (p = 0.1) is the identity in eval mode."""

    def __init__(self):
        super().__init__()
        self.n_heads = 12
        self.q_proj = nn.Linear(768, 768)
        self.k_proj = nn.Linear(768, 768)
        self.v_proj = nn.Linear(768, 768)
        self.out_proj = nn.Linear(768, 768)
        self.ln1 = nn.LayerNorm(768)
        self.ln2 = nn.LayerNorm(768)
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
        a = attention(self.q_proj(x), self.k_proj(x), self.v_proj(x), self.n_heads)
        x = self.ln1(x + self.dropout(self.out_proj(a)))
        h = self.dropout(F.gelu(self.fc1(x)))
        return self.ln2(x + self.dropout(self.fc2(h)))


def get_inputs():
    x = torch.randn(8, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
