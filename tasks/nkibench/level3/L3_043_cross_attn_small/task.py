import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Cross-attention block (12 heads of 64): queries from LayerNorm(x), keys and values from the
    context (not normalised), output projection, plus the residual x."""

    def __init__(self):
        super().__init__()
        self.n_heads = 12
        self.head_dim = 64
        self.ln = nn.LayerNorm(768)
        self.q_proj = nn.Linear(768, 768)
        self.k_proj = nn.Linear(768, 768)
        self.v_proj = nn.Linear(768, 768)
        self.out_proj = nn.Linear(768, 768)
        # Sharper attention and unit-scale values than the default initialisation, so that the
        # attention branch is O(1) against the residual (with the defaults it is ~5% of it)
        with torch.no_grad():
            for lin, gain in ((self.q_proj, 1.5), (self.k_proj, 1.5), (self.v_proj, 1.0),
                              (self.out_proj, 1.0)):
                lin.weight.normal_(0.0, gain / math.sqrt(768))

    def forward(self, x, context):
        B, Sq, D = x.shape
        Skv = context.shape[1]
        H, Dh = self.n_heads, self.head_dim
        q = self.q_proj(self.ln(x)).view(B, Sq, H, Dh).transpose(1, 2)
        k = self.k_proj(context).view(B, Skv, H, Dh).transpose(1, 2)
        v = self.v_proj(context).view(B, Skv, H, Dh).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(Dh))
        attn = torch.softmax(scores, dim=-1)
        o = torch.matmul(attn, v).transpose(1, 2).reshape(B, Sq, D)
        return x + self.out_proj(o)


def get_inputs():
    x = torch.randn(4, 196, 768, dtype=torch.float32)
    context = torch.randn(4, 77, 768, dtype=torch.float32)
    return [x, context]


def get_init_inputs():
    return []
