# source: written for bench/holdout17 from RULES.md AG006 (speech-enhancement mask module: the sigmoid mask is floored in place with clamp_ inside forward)
# symptom: modified by an inplace operation
"""Spectral-mask denoiser on random magnitude spectrograms."""
import torch
import torch.nn as nn


class MaskEstimator(nn.Module):
    def __init__(self, n_freq=65, hidden=64, floor=0.05):
        super().__init__()
        self.rnn = nn.GRU(n_freq, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, n_freq)
        self.floor = floor

    def forward(self, noisy_mag):
        h, _ = self.rnn(torch.log1p(noisy_mag))
        mask = torch.sigmoid(self.proj(h))
        mask = mask.clamp(min=self.floor)
        return mask * noisy_mag


torch.manual_seed(0)
model = MaskEstimator()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    clean = torch.rand(4, 50, 65)
    noisy = clean + 0.3 * torch.rand(4, 50, 65)
    est = model(noisy)
    loss = (est - clean).abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, "L1", round(loss.item(), 4))
