# source: https://github.com/pytorch/audio/pull/369 (pattern: audio transform modules create their window / filterbank tensors in __init__ without registering them as buffers, so moving the module to another device or dtype leaves them behind)
# symptom: buffer left behind by \.to\(\): True
"""Keyword-spotting front end: a hand-written Spectrogram + MelScale pair in front of a small classifier."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class Spectrogram(nn.Module):
    def __init__(self, n_fft=64, hop_length=32):
        super().__init__()
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.window = torch.hann_window(n_fft)  # expect: AG009

    def forward(self, waveform):
        spec = torch.stft(waveform, self.n_fft, self.hop_length, window=self.window.to(waveform.dtype),
                          return_complex=True)
        return spec.abs() ** 2


class MelScale(nn.Module):
    def __init__(self, n_mels=8, n_stft=33):
        super().__init__()
        fb = torch.linspace(0, 1, n_stft).unsqueeze(1) * torch.linspace(1, 0, n_mels).unsqueeze(0)
        self.fb = fb  # expect: AG009

    def forward(self, spec):
        return torch.matmul(spec.transpose(-1, -2), self.fb.to(spec.dtype)).transpose(-1, -2)


class KWS(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.spec = Spectrogram()
        self.mel = MelScale()
        self.head = nn.Linear(8, n_classes)

    def forward(self, wav):
        m = torch.log1p(self.mel(self.spec(wav)))
        return self.head(m.mean(-1))


model = KWS()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
wav = torch.sin(torch.linspace(0, 40 * math.pi, 1024)).repeat(6, 1) + 0.1 * torch.randn(6, 1024)
labels = torch.tensor([0, 1, 2, 0, 1, 2])
for step in range(3):
    loss = F.cross_entropy(model(wav), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

model = model.to(torch.float64)
print("head dtype:", model.head.weight.dtype, "window dtype:", model.spec.window.dtype)
print("buffer left behind by .to():", model.spec.window.dtype != model.head.weight.dtype)
