import torch

net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
batch = torch.randn(5, 3)
for step in range(3):
    hidden = torch.tanh(net(batch))
    loss_a = hidden.pow(2).mean()
    loss_b = hidden.abs().mean()
    opt.zero_grad()
    loss_a.backward(retain_graph=True)  # audit-expect: AG003
    opt.step()
    loss_b.backward()
