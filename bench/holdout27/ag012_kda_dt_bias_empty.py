# source: https://github.com/NVIDIA/TensorRT-LLM/pull/17822 (pattern: Kimi KDA reference module allocates self.dt_bias = nn.Parameter(torch.empty(projection_size)) and never initialises it; the gate reads the garbage)
# symptom: gate nan: True
"""Kimi-delta-attention style gate: g = -exp(A_log) * softplus(f_b(f_a(x)) + dt_bias)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)  # uninitialised memory is filled with NaN, as in the reviewer's CI


class KimiKDAReference(nn.Module):
    def __init__(self, hidden_size=32, num_heads=4, head_dim=8):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = head_dim
        projection_size = num_heads * head_dim
        self.q_proj = nn.Linear(hidden_size, projection_size, bias=False)
        self.A_log = nn.Parameter(
            torch.log(torch.empty(num_heads, dtype=torch.float32).uniform_(1, 16))
        )
        self.f_a_proj = nn.Linear(hidden_size, head_dim, bias=False)
        self.f_b_proj = nn.Linear(head_dim, projection_size, bias=False)
        self.dt_bias = nn.Parameter(torch.empty(projection_size, dtype=torch.float32))  # expect: AG012

    def gate(self, hidden_states):
        g = self.f_b_proj(self.f_a_proj(hidden_states))
        A = self.A_log.exp().repeat_interleave(self.head_dim)
        return -A * F.softplus(g + self.dt_bias)

    def forward(self, hidden_states):
        q = self.q_proj(hidden_states)
        return q * self.gate(hidden_states).exp()


module = KimiKDAReference()
x = torch.randn(2, 5, 32)
g = module.gate(x)
out = module(x)
print("A_log finite:", bool(torch.isfinite(module.A_log).all()))
print("gate nan:", bool(torch.isnan(g).any()))
print("output mean:", out.mean().item())
