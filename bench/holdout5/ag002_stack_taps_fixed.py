# source: written for bench/holdout5 (short training program, learnable FIR smoothing filter, function-based)
import math

import torch
import torch.nn.functional as F

torch.manual_seed(3)


def make_signal(n=256):
    t = torch.linspace(0, 8 * math.pi, n)
    clean = torch.sin(t)
    noisy = clean + 0.3 * torch.randn(n)
    return noisy.view(1, 1, -1), clean.view(1, 1, -1)


def train(steps=40):
    c0 = torch.tensor(0.2, requires_grad=True)
    c1 = torch.tensor(0.5, requires_grad=True)
    c2 = torch.tensor(0.2, requires_grad=True)
    opt = torch.optim.SGD([c0, c1, c2], lr=0.05)
    noisy, clean = make_signal()
    initial = torch.stack([c0, c1, c2]).view(1, 1, 3).detach().clone()
    for step in range(steps):
        opt.zero_grad()
        taps = torch.stack([c0, c1, c2]).view(1, 1, 3)
        smoothed = F.conv1d(noisy, taps, padding=1)
        loss = F.mse_loss(smoothed, clean)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    print("coefficients:", [round(c.item(), 3) for c in (c0, c1, c2)])
    print("taps changed during training:", not torch.equal(initial, taps.detach()))


if __name__ == "__main__":
    train()
