import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Perceiver-style latent cross-attention block (8 heads of 64, width 512): the latents
    (LayerNorm) attend to the LayerNorm'd inputs, output projection plus the latents' residual;
    then a pre-norm feed-forward 512 -> 2048 -> 512 (exact GELU) plus the residual."""

    def __init__(self):
        super().__init__()
        self.n_heads = 8
        self.head_dim = 64
        self.ln_latent = nn.LayerNorm(512)
        self.ln_input = nn.LayerNorm(512)
        self.q_proj = nn.Linear(512, 512)
        self.k_proj = nn.Linear(512, 512)
        self.v_proj = nn.Linear(512, 512)
        self.out_proj = nn.Linear(512, 512)
        self.ff_ln = nn.LayerNorm(512)
        self.ff1 = nn.Linear(512, 2048)
        self.ff2 = nn.Linear(2048, 512)

    def forward(self, latents, inputs):
        B, Sq, D = latents.shape
        Skv = inputs.shape[1]
        H, Dh = self.n_heads, self.head_dim
        kv = self.ln_input(inputs)
        q = self.q_proj(self.ln_latent(latents)).view(B, Sq, H, Dh).transpose(1, 2)
        k = self.k_proj(kv).view(B, Skv, H, Dh).transpose(1, 2)
        v = self.v_proj(kv).view(B, Skv, H, Dh).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(Dh))
        attn = torch.softmax(scores, dim=-1)
        o = torch.matmul(attn, v).transpose(1, 2).reshape(B, Sq, D)
        x = latents + self.out_proj(o)
        return x + self.ff2(F.gelu(self.ff1(self.ff_ln(x))))


def get_inputs():
    latents = torch.randn(4, 64, 512, dtype=torch.float32)
    inputs = torch.randn(4, 1024, 512, dtype=torch.float32)
    return [latents, inputs]


def get_init_inputs():
    return []
