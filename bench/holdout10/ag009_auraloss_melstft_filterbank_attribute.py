# source: https://github.com/csteinmetz1/auraloss/issues/34
# symptom: expected scalar type Double but found Float
"""auraloss `STFTLoss` (used by `MelSTFTLoss`): the mel filterbank is stored as a plain attribute,
`self.fb = torch.tensor(fb).unsqueeze(0)`, so moving the loss module with `.to(...)` leaves it behind. On a GPU that is
the reported device mismatch; here the move is to float64 on the CPU (standing in for `.to("cuda")`), and the stale
float32 filterbank meets float64 spectrograms in `torch.matmul`."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def mel_filters(sr, n_fft, n_mels):
    """A triangular mel filterbank as nested lists (the role of `librosa.filters.mel`)."""
    def hz_to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    n_freqs = n_fft // 2 + 1
    freqs = [i * sr / n_fft for i in range(n_freqs)]
    mels = [mel_to_hz(hz_to_mel(0.0) + (hz_to_mel(sr / 2) - hz_to_mel(0.0)) * i / (n_mels + 1)) for i in range(n_mels + 2)]
    fb = []
    for m in range(n_mels):
        lo, centre, hi = mels[m], mels[m + 1], mels[m + 2]
        fb.append([max(0.0, min((f - lo) / (centre - lo), (hi - f) / (hi - centre))) for f in freqs])
    return fb


class SpectralConvergenceLoss(nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")


class STFTMagnitudeLoss(nn.Module):
    def __init__(self, log=True, reduction="mean"):
        super().__init__()
        self.log, self.reduction = log, reduction

    def forward(self, x_mag, y_mag):
        if self.log:
            x_mag, y_mag = torch.log(x_mag), torch.log(y_mag)
        return nn.functional.l1_loss(x_mag, y_mag, reduction=self.reduction)


class STFTLoss(nn.Module):
    def __init__(self, fft_size=256, hop_size=64, win_length=256, window="hann_window", w_sc=1.0, w_log_mag=1.0,
                 sample_rate=None, scale=None, n_bins=None, eps=1e-8, reduction="mean"):
        super().__init__()
        self.fft_size, self.hop_size, self.win_length = fft_size, hop_size, win_length
        self.register_buffer("window", getattr(torch, window)(win_length))
        self.w_sc, self.w_log_mag = w_sc, w_log_mag
        self.sample_rate, self.scale, self.n_bins, self.eps = sample_rate, scale, n_bins, eps
        self.spectralconv = SpectralConvergenceLoss()
        self.logstft = STFTMagnitudeLoss(log=True, reduction=reduction)
        if self.scale == "mel":
            assert sample_rate is not None  # Must set sample rate to use mel scale
            assert n_bins <= fft_size  # Must be more FFT bins than Mel bins
            fb = mel_filters(sample_rate, fft_size, n_bins)
            self.fb = torch.tensor(fb).unsqueeze(0)  # expect: AG009

    def stft(self, x):
        x_stft = torch.stft(x, self.fft_size, self.hop_size, self.win_length, self.window, return_complex=True)
        return torch.sqrt(torch.clamp(x_stft.real ** 2 + x_stft.imag ** 2, min=self.eps))

    def forward(self, x, y):
        bs, chs, seq_len = x.size()
        x_mag = self.stft(x.view(-1, seq_len))
        y_mag = self.stft(y.view(-1, seq_len))
        if self.scale is not None:
            x_mag = torch.matmul(self.fb, x_mag)
            y_mag = torch.matmul(self.fb, y_mag)
        return self.w_sc * self.spectralconv(x_mag, y_mag) + self.w_log_mag * self.logstft(x_mag + self.eps, y_mag + self.eps)


class MelSTFTLoss(STFTLoss):
    def __init__(self, sample_rate, fft_size=256, hop_size=64, win_length=256, n_mels=32, **kwargs):
        super().__init__(fft_size, hop_size, win_length, sample_rate=sample_rate, scale="mel", n_bins=n_mels, **kwargs)


class Effect(nn.Module):
    """A small learnable audio effect: a stack of 1-D convolutions."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.Tanh(), nn.Conv1d(8, 1, 9, padding=4))

    def forward(self, x):
        return x + self.net(x)


device, dtype = torch.device("cpu"), torch.float64  # stands in for .to("cuda")
model = Effect().to(device, dtype)
criterion = MelSTFTLoss(sample_rate=16000).to(device, dtype)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

clean = torch.randn(4, 1, 2048, dtype=dtype)
noisy = clean + 0.1 * torch.randn_like(clean)
for step in range(5):
    optimizer.zero_grad()
    loss = criterion(model(noisy), clean)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
