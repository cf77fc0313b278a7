import torch
import torch.nn.functional as F

net = torch.nn.Linear(4, 3)
x, labels = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
loss = F.cross_entropy(net(x), labels)
loss.backward()
