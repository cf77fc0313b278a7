import torch

net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
x, y = torch.randn(8, 3), torch.randn(8, 1)
opt.zero_grad()
for step in range(3):
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    opt.step()  # audit-expect: AG016
