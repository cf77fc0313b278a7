"""AG006 fixed: the clamp is out of place, so the tensor sigmoid saved is left alone.
Observed in torch 2.13: runs clean; the loss goes down."""
import torch

torch.manual_seed(0)
x = torch.randn(32, 4)
targets = (x.sum(dim=1) > 0).float()
w = torch.zeros(4, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.5)

for step in range(3):
    optimizer.zero_grad()
    probs = torch.sigmoid(x @ w)
    probs = probs.clamp(1e-6, 1 - 1e-6)
    loss = -(targets * probs.log() + (1 - targets) * (1 - probs).log()).mean()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
