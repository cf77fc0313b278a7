# source: https://github.com/facebookresearch/denoiser/issues/27
# symptom: STFT loss windows left behind by \.to\(\): True
"""facebookresearch/denoiser `stft_loss.py` (from ParallelWaveGAN): `STFTLoss.__init__` keeps its analysis window as a
plain attribute, `self.window = getattr(torch, window)(win_length)`. The solver moves the multi-resolution STFT loss
with the model, but `.to()` only moves parameters and buffers, so the window stays behind and `torch.stft` fails with
"Expected all tensors to be on the same device" when fine-tuning with `stft_loss: true` on a GPU. This CPU program
moves model and loss to float64 instead of to a GPU and reports the windows that stayed behind.

Fixed as the repository's `stft_loss.py` now has it: `self.register_buffer("window", getattr(torch, window)(win_length))`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def stft(x, fft_size, hop_size, win_length, window):
    x_stft = torch.stft(x, fft_size, hop_size, win_length, window, return_complex=True)
    return torch.clamp(x_stft.abs() ** 2, min=1e-7).sqrt().transpose(2, 1)


class SpectralConvergengeLoss(nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")


class LogSTFTMagnitudeLoss(nn.Module):
    def forward(self, x_mag, y_mag):
        return F.l1_loss(torch.log(y_mag), torch.log(x_mag))


class STFTLoss(nn.Module):
    def __init__(self, fft_size=1024, shift_size=120, win_length=600, window="hann_window"):
        super().__init__()
        self.fft_size = fft_size
        self.shift_size = shift_size
        self.win_length = win_length
        self.register_buffer("window", getattr(torch, window)(win_length))
        self.spectral_convergenge_loss = SpectralConvergengeLoss()
        self.log_stft_magnitude_loss = LogSTFTMagnitudeLoss()

    def forward(self, x, y):
        x_mag = stft(x, self.fft_size, self.shift_size, self.win_length, self.window)
        y_mag = stft(y, self.fft_size, self.shift_size, self.win_length, self.window)
        return self.spectral_convergenge_loss(x_mag, y_mag), self.log_stft_magnitude_loss(x_mag, y_mag)


class MultiResolutionSTFTLoss(nn.Module):
    def __init__(self, fft_sizes=(128, 256, 64), hop_sizes=(16, 32, 8), win_lengths=(64, 128, 32),
                 window="hann_window", factor_sc=0.1, factor_mag=0.1):
        super().__init__()
        self.stft_losses = nn.ModuleList()
        for fs, ss, wl in zip(fft_sizes, hop_sizes, win_lengths):
            self.stft_losses += [STFTLoss(fs, ss, wl, window)]
        self.factor_sc = factor_sc
        self.factor_mag = factor_mag

    def forward(self, x, y):
        sc_loss = 0.0
        mag_loss = 0.0
        for f in self.stft_losses:
            sc_l, mag_l = f(x, y)
            sc_loss += sc_l
            mag_loss += mag_l
        sc_loss /= len(self.stft_losses)
        mag_loss /= len(self.stft_losses)
        return self.factor_sc * sc_loss, self.factor_mag * mag_loss


class Demucs(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(1, hidden, 8, 4, padding=2), nn.ReLU())
        self.decoder = nn.ConvTranspose1d(hidden, 1, 8, 4, padding=2)

    def forward(self, mix):
        return self.decoder(self.encoder(mix))


class Solver:
    def __init__(self, model, optimizer, dtype, stft_loss=True):
        self.model = model.to(dtype)
        self.optimizer = optimizer
        self.dtype = dtype
        self.stft_loss = stft_loss
        if stft_loss:
            self.mrstftloss = MultiResolutionSTFTLoss(factor_sc=0.5, factor_mag=0.5).to(dtype)

    def _run_one_epoch(self, data):
        total = 0.0
        for noisy, clean in data:
            noisy, clean = noisy.to(self.dtype), clean.to(self.dtype)
            estimate = self.model(noisy)
            loss = F.l1_loss(clean, estimate)
            if self.stft_loss:
                sc_loss, mag_loss = self.mrstftloss(estimate.squeeze(1), clean.squeeze(1))
                loss = loss + sc_loss + mag_loss
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total / len(data)


torch.manual_seed(0)
data = [(torch.randn(2, 1, 512), torch.randn(2, 1, 512)) for _ in range(2)]
model = Demucs()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
solver = Solver(model, optimizer, torch.float64)
print("epoch loss {:.4f}".format(solver._run_one_epoch(data)))
left = [f.window.dtype != torch.float64 for f in solver.mrstftloss.stft_losses]
print("STFT loss windows left behind by .to():", any(left))
