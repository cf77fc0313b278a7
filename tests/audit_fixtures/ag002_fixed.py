import torch

row_a = torch.nn.Parameter(torch.ones(2))
row_b = torch.nn.Parameter(torch.full((2,), 0.5))
opt = torch.optim.SGD([row_a, row_b], lr=0.1)
inputs = torch.randn(6, 2)
for step in range(3):
    opt.zero_grad()
    weights = torch.stack([row_a, row_b])
    loss = (inputs @ weights).pow(2).mean()
    loss.backward()
    opt.step()
