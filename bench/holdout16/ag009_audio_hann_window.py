# source: written for bench/holdout16 from RULES.md AG009 (spectrogram front-end module keeps its STFT window as a plain tensor attribute; the model is moved with .to())
# symptom: window left behind by \.to\(\): True
"""Keyword spotting: a log-spectrogram front-end module feeding a small classifier, trained in float64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LogSpec(nn.Module):
    def __init__(self, n_fft=64, hop=32):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.window = torch.hann_window(n_fft)  # expect: AG009

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window.to(wav.dtype), return_complex=True)
        return torch.log1p(spec.abs())


class KWS(nn.Module):
    def __init__(self, n_words=4):
        super().__init__()
        self.front = LogSpec()
        self.net = nn.Sequential(nn.Flatten(), nn.LazyLinear(n_words))

    def forward(self, wav):
        return self.net(self.front(wav))


device, dtype = torch.device("cpu"), torch.float64
model = KWS()
model(torch.zeros(2, 800))
model = model.to(device, dtype)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    wav, label = torch.randn(8, 800, dtype=dtype), torch.randint(0, 4, (8,))
    opt.zero_grad()
    loss = F.cross_entropy(model(wav), label)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
left_behind = model.front.window.dtype != dtype or model.front.window.device != device
print(f"window dtype after .to(): {model.front.window.dtype}")
print(f"window left behind by .to(): {left_behind}")
