import torch
import torch.nn.functional as F

net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
x, y = torch.randn(8, 3), torch.randn(8, 1)
running = 0.0
for step in range(4):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    running = running + loss  # audit-expect: AG015
print("mean loss", running.item() / 4)
