import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Mixture of experts, top-2 of 8: a linear router (768 -> 8) and softmax pick each token's two
    most probable experts, their probabilities renormalised to sum to 1; each expert is
    gelu(x @ w1[e]) @ w2[e] (768 -> 3072 -> 768, no biases, randn weights as upstream), and a
    token's output is the weighted sum of its two experts' outputs."""

    def __init__(self):
        super().__init__()
        self.n_experts = 8
        self.top_k = 2
        self.gate = nn.Linear(768, 8)
        self.experts_w1 = nn.Parameter(torch.randn(8, 768, 3072))
        self.experts_w2 = nn.Parameter(torch.randn(8, 3072, 768))

    def forward(self, x):
        B, S, D = x.shape
        tokens = x.reshape(-1, D)
        probs = F.softmax(self.gate(tokens), dim=-1)
        top_w, top_i = torch.topk(probs, self.top_k, dim=-1)
        top_w = top_w / top_w.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(tokens)
        for k in range(self.top_k):
            for e in range(self.n_experts):
                sel = top_i[:, k] == e
                if sel.any():
                    h = F.gelu(tokens[sel] @ self.experts_w1[e])
                    out[sel] += top_w[sel, k:k + 1] * (h @ self.experts_w2[e])
        return out.reshape(B, S, D)


def get_inputs():
    x = torch.randn(4, 128, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
