# source: https://github.com/SvenBecker/vscode-pytorch/issues/8
# symptom: frozen backbone updated: True
# The extension's "freeze" snippet writes param.require_grad = False; PyTorch does not complain and keeps all
# parameters trainable. Here a fine-tuning script freezes its pretrained backbone with that snippet.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.features(x))


def freeze(model):
    for param in model.parameters():
        param.require_grad = False  # expect: AG018


model = Net()                       # stands in for the pretrained network
freeze(model)
model.fc = nn.Linear(8, 3)          # new head, trainable
backbone_before = model.features[0].weight.detach().clone()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    inputs, labels = torch.randn(8, 3, 8, 8), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
print("frozen backbone updated:", not torch.equal(backbone_before, model.features[0].weight.detach()))
