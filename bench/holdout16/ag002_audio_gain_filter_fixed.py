# source: written for bench/holdout16 from RULES.md AG002 (trainer class composes a gain-scaled FIR kernel in __init__, used by train_step)
# symptom: backward through the graph a second time
"""Learn a gain-scaled FIR filter that maps noisy audio frames to clean ones
(fixed: the kernel is composed in every train_step)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class FilterTrainer:
    def __init__(self, taps=9, lr=1e-2):
        self.base = torch.randn(1, 1, taps, requires_grad=True)
        self.gain = torch.ones(1, requires_grad=True)
        self.opt = torch.optim.Adam([self.base, self.gain], lr=lr)

    def train_step(self, noisy, clean):
        self.opt.zero_grad()
        kernel = self.gain * torch.tanh(self.base)
        out = F.conv1d(noisy, kernel, padding=kernel.shape[-1] // 2)
        loss = F.mse_loss(out, clean)
        loss.backward()
        self.opt.step()
        return loss.item()


trainer = FilterTrainer()
for step in range(5):
    clean = torch.sin(torch.linspace(0, 20, 256)).repeat(4, 1, 1) * torch.rand(4, 1, 1)
    noisy = clean + 0.1 * torch.randn_like(clean)
    print(f"step {step} loss {trainer.train_step(noisy, clean):.5f}")
