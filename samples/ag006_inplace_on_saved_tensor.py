"""AG006 (seed 003 section 7.2): clamping sigmoid probabilities in place; sigmoid saved its output for backward.
Observed in torch 2.13: RuntimeError at backward(): ... modified by an inplace operation ... which is output 0 of Sigmoid, is at version 1; expected version 0."""
import torch

torch.manual_seed(0)
x = torch.randn(32, 4)
targets = (x.sum(dim=1) > 0).float()
w = torch.zeros(4, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.5)

for step in range(3):
    optimizer.zero_grad()
    probs = torch.sigmoid(x @ w)
    probs.clamp_(1e-6, 1 - 1e-6)  # expect: AG006
    loss = -(targets * probs.log() + (1 - targets) * (1 - probs).log()).mean()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
