"""AG007 (seed 002): `w_ref = w` under torch.no_grad() is only a second name for w, not a frozen copy.
Observed in torch 2.13: silent; w_ref.requires_grad is True and w_ref moves with w, so the proximal term is always 0."""
import torch

torch.manual_seed(0)
x = torch.randn(16, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5])
w = torch.zeros(3, requires_grad=True)
with torch.no_grad():
    w_ref = w  # expect: AG007

optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    proximal = ((w - w_ref) ** 2).sum()  # keep w close to where it started
    loss = ((x @ w - y) ** 2).mean() + proximal
    loss.backward()
    optimizer.step()
    print(step, loss.item(), proximal.item())
