import torch

net = torch.nn.Linear(4, 1)
features, target = torch.randn(8, 4), torch.randn(8, 1)
error = (net(features) - target) ** 2
error.backward()  # audit-expect: AG005
