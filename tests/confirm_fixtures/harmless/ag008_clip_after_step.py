"""WGAN clipping where it belongs: after optimizer.step(), through .data; no pending graph saved w."""
import torch


def critic_loss(w, real, fake):
    return (fake @ w).tanh().mean() - (real @ w).tanh().mean() + 0.1 * (w ** 2).sum()


torch.manual_seed(0)
real = torch.randn(64, 4) + 1.0
fake = torch.randn(64, 4)
w = torch.randn(4, requires_grad=True)
optimizer = torch.optim.RMSprop([w], lr=0.05)
for step in range(3):
    optimizer.zero_grad()
    loss = critic_loss(w, real, fake)
    loss.backward()
    optimizer.step()
    w.data.clamp_(-0.5, 0.5)  # harmless: AG008
