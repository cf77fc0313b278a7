"""AG008 (seeds 002, 003): WGAN-style weight clipping through `.data`, placed between the forward and backward.
Observed in torch 2.13: silent; autograd does not see the clip, so w.grad is not the gradient of the loss that was computed."""
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
    w_used = w.detach().clone()  # the weights this step's forward sees
    loss = critic_loss(w, real, fake)
    w.data.clamp_(-0.5, 0.5)  # expect: AG008
    loss.backward()
    optimizer.step()
    print(step, loss.item())
