# source: written for bench/holdout17 from RULES.md AG009 (audio front-end module keeps its Hann window as a plain tensor attribute; the model is moved to float64 for a gradient check)
# symptom: window follows the module: False
"""Log-magnitude STFT front-end + classifier; a float64 gradcheck-style pass after a short float32 training run."""
import math
import torch
import torch.nn as nn


class STFTFrontEnd(nn.Module):
    def __init__(self, n_fft=64, hop=16):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.window = torch.hann_window(n_fft)  # expect: AG009
        k = torch.arange(n_fft // 2 + 1).float()[:, None]
        n = torch.arange(n_fft).float()[None, :]
        self.register_buffer("cos_basis", torch.cos(2 * math.pi * k * n / n_fft))
        self.register_buffer("sin_basis", torch.sin(2 * math.pi * k * n / n_fft))

    def forward(self, wave):
        frames = wave.unfold(-1, self.n_fft, self.hop) * self.window
        re = frames @ self.cos_basis.t()
        im = frames @ self.sin_basis.t()
        return torch.log1p(re ** 2 + im ** 2)


class KeywordNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.front = STFTFrontEnd()
        self.head = nn.Linear(33, 5)

    def forward(self, wave):
        return self.head(self.front(wave).mean(1))


torch.manual_seed(0)
model = KeywordNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    wave, label = torch.randn(4, 400), torch.randint(0, 5, (4,))
    loss = nn.functional.cross_entropy(model(wave), label)
    opt.zero_grad()
    loss.backward()
    opt.step()

model = model.to(torch.float64)
print("window follows the module:", model.front.window.dtype == model.head.weight.dtype)
wave = torch.randn(2, 400, dtype=torch.float64, requires_grad=True)
out = model(wave).sum()
out.backward()
print("float64 check ok, grad norm", wave.grad.norm().item())
