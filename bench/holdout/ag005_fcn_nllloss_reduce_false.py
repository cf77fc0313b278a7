# source: https://github.com/pytorch/pytorch/issues/6166
# symptom: grad can be implicitly created only for scalar outputs
# A fully convolutional segmentation net: LogSoftmax(dim=1) over (N, C, H, W) scores, then NLLLoss(reduce=False),
# which leaves an (N, H, W) loss map; loss.backward() on it raises.
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
criterion = torch.nn.NLLLoss(reduce=False)

for i in range(2):
    inputs, labels = torch.randn(2, 3, 8, 8), torch.randint(0, 3, (2, 8, 8))
    outputs = model(inputs)
    outputs = logsoftmax(outputs)
    loss = criterion(outputs, labels)
    optimizer.zero_grad()
    loss.backward()  # expect: AG005
    optimizer.step()
    print(i, loss.mean().item())
