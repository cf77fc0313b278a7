import torch

# Clipping through .data after the step: no pending graph saved w, the next forward reads the clipped values.
w = torch.randn(5, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    torch.sigmoid(w).sum().backward()
    opt.step()
    w.data.clamp_(-1.0, 1.0)
