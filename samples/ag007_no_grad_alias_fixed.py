"""AG007 fixed: `w.detach().clone()` makes a real, untracked snapshot of the starting weights.
Observed in torch 2.13: runs clean; w_ref does not require grad and keeps the initial values."""
import torch

torch.manual_seed(0)
x = torch.randn(16, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
w_ref = w.detach().clone()

optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    proximal = ((w - w_ref) ** 2).sum()  # keep w close to where it started
    loss = ((x @ w - y) ** 2).mean() + proximal
    loss.backward()
    optimizer.step()
    print(step, loss.item(), proximal.item())
