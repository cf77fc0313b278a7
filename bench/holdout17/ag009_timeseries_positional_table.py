# source: written for bench/holdout17 from RULES.md AG009 (transformer forecaster: sinusoidal position table built with torch.zeros in the encoding module's __init__ and filled in place)
# symptom: position table follows the module: False
"""Small Transformer encoder forecaster over random sensor windows; the model is moved with .to() before training."""
import math
import torch
import torch.nn as nn


class SinusoidalPosition(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        self.pe = torch.zeros(max_len, d_model)  # expect: AG009
        pos = torch.arange(max_len).float().unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        self.pe[:, 0::2] = torch.sin(pos * div)
        self.pe[:, 1::2] = torch.cos(pos * div)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Forecaster(nn.Module):
    def __init__(self, n_feat=5, d_model=16):
        super().__init__()
        self.inp = nn.Linear(n_feat, d_model)
        self.pos = SinusoidalPosition(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=32, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=1)
        self.out = nn.Linear(d_model, 1)

    def forward(self, x):
        return self.out(self.enc(self.pos(self.inp(x)))[:, -1])


torch.manual_seed(0)
model = Forecaster().to(torch.float64)
pe = model.pos.pe
print("position table follows the module:", pe.dtype == model.inp.weight.dtype and "pos.pe" in model.state_dict())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(8, 20, 5, dtype=torch.float64)
    y = x[:, -1, :1].cumsum(0)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 4))
