# source: https://github.com/pytorch/pytorch/issues/6166
# symptom: grad can be implicitly created only for scalar outputs
# Clean twin: the default (mean) reduction of NLLLoss gives a scalar loss.
import torch
import torch.nn as nn


class FCN(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, num_classes, 1))

    def forward(self, x):
        return self.features(x)


model = FCN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
logsoftmax = nn.LogSoftmax(dim=1)
criterion = torch.nn.NLLLoss()

for i in range(2):
    inputs, labels = torch.randn(2, 3, 8, 8), torch.randint(0, 3, (2, 8, 8))
    outputs = model(inputs)
    outputs = logsoftmax(outputs)
    loss = criterion(outputs, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, loss.mean().item())
