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
    """Pre-norm transformer decoder layer, 12 heads of 64, FFN 768 -> 3072 -> 768: causal
    self-attention x = x + self_out(attention(self_q(h), self_k(h), self_v(h), causal)), h =
    ln1(x); cross-attention over the encoder output x = x +
    cross_out(attention(cross_q(ln2(x)), cross_k(encoder_out), cross_v(encoder_out))) (no
    mask); x = x + fc2(gelu(fc1(ln3(x)))). LayerNorm eps 1e-5, exact (erf) GELU, every
    Linear with its bias. Dropout (p = 0.1) is the identity in eval mode."""

    def __init__(self):
        super().__init__()
        self.n_heads = 12
        self.ln1 = nn.LayerNorm(768)
        self.ln2 = nn.LayerNorm(768)
        self.ln3 = nn.LayerNorm(768)
        self.self_q = nn.Linear(768, 768)
        self.self_k = nn.Linear(768, 768)
        self.self_v = nn.Linear(768, 768)
        self.self_out = nn.Linear(768, 768)
        self.cross_q = nn.Linear(768, 768)
        self.cross_k = nn.Linear(768, 768)
        self.cross_v = nn.Linear(768, 768)
        self.cross_out = nn.Linear(768, 768)
        self.fc1 = nn.Linear(768, 3072)
        self.fc2 = nn.Linear(3072, 768)
        self.dropout = nn.Dropout(0.1)
        # LayerNorm affines drawn at random instead of ones / zeros, so that a kernel has
        # to apply them (they are kernel arguments: ln1_weight, ln1_bias, ln2_weight,
        # ln2_bias, ln3_weight, ln3_bias).
        with torch.no_grad():
            self.ln1.weight.uniform_(0.5, 1.5)
            self.ln1.bias.uniform_(-0.5, 0.5)
            self.ln2.weight.uniform_(0.5, 1.5)
            self.ln2.bias.uniform_(-0.5, 0.5)
            self.ln3.weight.uniform_(0.5, 1.5)
            self.ln3.bias.uniform_(-0.5, 0.5)

    def forward(self, x, encoder_out):
        h = self.ln1(x)
        a = attention(self.self_q(h), self.self_k(h), self.self_v(h), self.n_heads, causal=True)
        x = x + self.dropout(self.self_out(a))
        h = self.ln2(x)
        a = attention(self.cross_q(h), self.cross_k(encoder_out), self.cross_v(encoder_out),
                      self.n_heads)
        x = x + self.dropout(self.cross_out(a))
        h = self.ln3(x)
        h = self.dropout(F.gelu(self.fc1(h)))
        return x + self.dropout(self.fc2(h))


def get_inputs():
    x = torch.randn(4, 256, 768, dtype=torch.float32)
    encoder_out = torch.randn(4, 256, 768, dtype=torch.float32)
    return [x, encoder_out]


def get_init_inputs():
    return []
