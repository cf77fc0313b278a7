import torch

row_a = torch.nn.Parameter(torch.ones(2))
row_b = torch.nn.Parameter(torch.full((2,), 0.5))
opt = torch.optim.SGD([row_a, row_b], lr=0.1)
weights = torch.stack([row_a, row_b])  # built once, before the loop
inputs = torch.randn(6, 2)
for step in range(3):
    opt.zero_grad()
    loss = (inputs @ weights).pow(2).mean()  # audit-expect: AG002
    loss.backward()
    opt.step()
