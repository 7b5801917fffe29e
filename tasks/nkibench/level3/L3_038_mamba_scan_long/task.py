import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """NKIBench's simplified Mamba block (d_model 768, d_inner 1536, d_state 16), with no recurrent
    scan: LayerNorm, in_proj to x and a gate z, a causal depthwise Conv1d (kernel 4) over the
    sequence, SiLU; dt = softplus(dt_proj(x)), A = -exp(A_log); the state decays exp(dt * A) are
    summed over the state dimension instead of scanned, y = x * D + x * sum, gated by silu(z),
    out_proj, plus the residual."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(768)
        self.in_proj = nn.Linear(768, 2 * 1536, bias=False)
        self.conv1d = nn.Conv1d(1536, 1536, kernel_size=4, padding=3, groups=1536)
        self.dt_proj = nn.Linear(1536, 1536)
        self.A_log = nn.Parameter(torch.randn(1536, 16))
        self.D = nn.Parameter(torch.randn(1536))
        self.out_proj = nn.Linear(1536, 768, bias=False)

    def forward(self, x):
        L = x.shape[1]
        h = self.norm(x)
        u, z = self.in_proj(h).chunk(2, dim=-1)
        # causal: padding 3 on both sides, keep the first L outputs
        u = self.conv1d(u.transpose(1, 2))[:, :, :L].transpose(1, 2)
        u = F.silu(u)
        A = -torch.exp(self.A_log)                      # [1536, 16]
        dt = F.softplus(self.dt_proj(u))                # [B, L, 1536]
        decay = torch.exp(dt.unsqueeze(-1) * A)         # [B, L, 1536, 16]
        y = u * self.D + u * decay.sum(-1)
        y = y * F.silu(z)
        return x + self.out_proj(y)


def get_inputs():
    x = torch.randn(1, 4096, 768, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
