# source: https://github.com/gdalsanto/flamo/pull/30 (pattern: differentiable DSP base module keeps derived tensors (decay, gamma) as plain attributes created in __init__, so Module.to() leaves them on the construction device/dtype)
# symptom: buffer left behind by \.to\(\): True
"""Differentiable feedback-delay style filter: learnable gains, fixed decay envelope kept on the module."""
import torch
import torch.nn as nn


class DSP(nn.Module):
    def __init__(self, size, nfft=64, alias_decay_db=0.0):
        super().__init__()
        self.size = size
        self.nfft = nfft
        self.param = nn.Parameter(torch.randn(size) * 0.1)
        self.alias_decay_db = torch.tensor(alias_decay_db)  # expect: AG009
        self.gamma = torch.tensor(10 ** (-abs(alias_decay_db) / nfft / 20))  # expect: AG009
        self.alias_envelope_dcy = self.gamma ** torch.arange(0, -nfft, -1)  # expect: AG009

    def forward(self, x):
        # x: (batch, nfft, size) time-domain frames
        env = self.alias_envelope_dcy.to(x.dtype).view(1, -1, 1)
        return x * env * torch.tanh(self.param)


class Shell(nn.Module):
    def __init__(self, core):
        super().__init__()
        self.core = core

    def forward(self, x):
        return self.core(x).sum(dim=1)


model = Shell(DSP(size=4, nfft=64, alias_decay_db=3.0))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(8, 64, 4)
target = torch.randn(8, 4)
for step in range(5):
    loss = ((model(x) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")

model = model.to(torch.float64)
core = model.core
print("param dtype:", core.param.dtype, "gamma dtype:", core.gamma.dtype)
print("buffer left behind by .to():", core.gamma.dtype != core.param.dtype)
