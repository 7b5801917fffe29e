import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """RMSNorm over the last dimension: weight * (x * rsqrt(mean(x^2) + eps))."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class Model(nn.Module):
    """LLaMA decoder block without rotary embeddings: grouped-query attention, 32 query
    heads share 8 key / value heads (repeat_interleave) of 128, causal; x = x +
    o_proj(attention(q_proj(n), k_proj(n), v_proj(n))), n = attn_norm(x); x = x +
    down(silu(gate(m)) * up(m)), m = ffn_norm(x), SwiGLU 4096 -> 11008 -> 4096. RMSNorm eps
    1e-6 with a learned weight; no biases."""

    def __init__(self):
        super().__init__()
        self.n_heads = 32
        self.n_kv_heads = 8
        self.head_dim = 128
        self.n_rep = 32 // 8
        self.attn_norm = RMSNorm(4096)
        self.ffn_norm = RMSNorm(4096)
        self.q_proj = nn.Linear(4096, 4096, bias=False)
        self.k_proj = nn.Linear(4096, 1024, bias=False)
        self.v_proj = nn.Linear(4096, 1024, bias=False)
        self.o_proj = nn.Linear(4096, 4096, bias=False)
        self.gate = nn.Linear(4096, 11008, bias=False)
        self.up = nn.Linear(4096, 11008, bias=False)
        self.down = nn.Linear(11008, 4096, bias=False)
        # The RMSNorm weights drawn at random instead of ones, so that a kernel has to apply them
        # (kernel arguments: attn_norm_weight, ffn_norm_weight).
        with torch.no_grad():
            self.attn_norm.weight.uniform_(0.5, 1.5)
            self.ffn_norm.weight.uniform_(0.5, 1.5)

    def forward(self, x):
        B, S, D = x.shape
        n = self.attn_norm(x)
        q = self.q_proj(n).view(B, S, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(n).view(B, S, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(n).view(B, S, self.n_kv_heads, self.head_dim).transpose(1, 2)
        k = k.repeat_interleave(self.n_rep, dim=1)      # [B, H, S, Dh]
        v = v.repeat_interleave(self.n_rep, dim=1)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        causal = torch.triu(torch.ones(S, S, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(causal, float("-inf"))
        attn = F.softmax(scores, dim=-1)
        a = torch.matmul(attn, v).transpose(1, 2).contiguous().view(B, S, -1)
        x = x + self.o_proj(a)
        m = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(m)) * self.up(m))


def get_inputs():
    x = torch.randn(2, 256, 4096, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
