import torch

net = torch.nn.Linear(4, 3)
x, labels = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
predicted = net(x).argmax(dim=1)
loss = (predicted != labels).float().mean()
loss.backward()  # audit-expect: AG010
