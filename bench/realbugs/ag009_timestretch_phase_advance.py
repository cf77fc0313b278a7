# source: https://github.com/pytorch/audio/pull/457
# symptom: phase_advance on cpu, module moved to (meta|cuda)
# torchaudio's TimeStretch.__init__ kept self.phase_advance = torch.linspace(...)[..., None] as a plain attribute, so
# TimeStretch().cuda() left it on the CPU ("expected device cuda:0 but got device cpu"). Re-created with its phase vocoder.
import math

import torch
import torch.nn as nn


def phase_vocoder(complex_specgrams, rate, phase_advance):
    """complex_specgrams: (..., freq, time, 2) as real/imag pairs."""
    time_steps = torch.arange(0, complex_specgrams.size(-2), rate, device=complex_specgrams.device)
    alphas = time_steps % 1.0
    phase_0 = torch.atan2(complex_specgrams[..., :1, 1], complex_specgrams[..., :1, 0])
    complex_specgrams = nn.functional.pad(complex_specgrams, [0, 0, 0, 2])
    index = time_steps.long()
    c0 = complex_specgrams[..., index, :]
    c1 = complex_specgrams[..., index + 1, :]
    angle_0 = torch.atan2(c0[..., 1], c0[..., 0])
    angle_1 = torch.atan2(c1[..., 1], c1[..., 0])
    norm_0 = torch.norm(c0, p=2, dim=-1)
    norm_1 = torch.norm(c1, p=2, dim=-1)
    phase = angle_1 - angle_0 - phase_advance
    phase = phase - 2 * math.pi * torch.round(phase / (2 * math.pi))
    phase = phase + phase_advance
    phase = torch.cat([phase_0, phase[..., :-1]], dim=-1)
    phase_acc = torch.cumsum(phase, -1)
    mag = alphas * norm_1 + (1 - alphas) * norm_0
    return torch.stack([mag * torch.cos(phase_acc), mag * torch.sin(phase_acc)], dim=-1)


class TimeStretch(nn.Module):
    def __init__(self, hop_length=None, n_freq=201, fixed_rate=None):
        super().__init__()
        self.fixed_rate = fixed_rate
        n_fft = (n_freq - 1) * 2
        hop_length = hop_length if hop_length is not None else n_fft // 2
        self.phase_advance = torch.linspace(0, math.pi * hop_length, n_freq)[..., None]  # expect: AG009

    def forward(self, complex_specgrams, overriding_rate=None):
        rate = self.fixed_rate if overriding_rate is None else overriding_rate
        if rate == 1.0:
            return complex_specgrams
        return phase_vocoder(complex_specgrams, rate, self.phase_advance)


device = torch.device("cuda") if torch.cuda.is_available() else torch.device("meta")
m = TimeStretch().to(device)
print(f"phase_advance on {m.phase_advance.device}, module moved to {device.type}")
print(m(torch.randn(1, 2, 201, 40, 2, device=device), 1.3).shape)
