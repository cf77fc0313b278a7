# source: https://github.com/udacity/deep-learning-v2-pytorch/pull/160
# symptom: gradients accumulated across \d+ steps: True
# Clean twin: the PR's fix, optimizer.zero_grad() before each forward/backward.
import torch
from torch import nn, optim

torch.manual_seed(0)
device = torch.device("cpu")


class TinyDenseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(8, 1000)

    def forward(self, x):
        return self.classifier(self.features(x))


model = TinyDenseNet()
for param in model.parameters():
    param.requires_grad = False
model.classifier = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2), nn.LogSoftmax(dim=1))
criterion = nn.NLLLoss()
optimizer = optim.Adam(model.classifier.parameters(), lr=0.003)
model.to(device)

watched = model.classifier[0].weight
fresh = []
watched.register_hook(lambda g: fresh.append(g.clone()))

trainloader = [(torch.randn(4, 3, 16, 16), torch.randint(0, 2, (4,))) for _ in range(4)]
testloader = trainloader[:1]
epochs = 1
steps = 0
running_loss = 0
print_every = 2
for epoch in range(epochs):
    for inputs, labels in trainloader:
        steps += 1
        inputs, labels = inputs.to(device), labels.to(device)
        optimizer.zero_grad()
        logps = model.forward(inputs)
        loss = criterion(logps, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if steps % print_every == 0:
            test_loss = 0
            model.eval()
            with torch.no_grad():
                for inputs, labels in testloader:
                    logps = model.forward(inputs)
                    test_loss += criterion(logps, labels).item()
            print(f"Epoch {epoch + 1}/{epochs}.. Train loss: {running_loss / print_every:.3f}.. "
                  f"Test loss: {test_loss / len(testloader):.3f}")
            running_loss = 0
            model.train()

accumulated = len(fresh) > 1 and torch.allclose(watched.grad, torch.stack(fresh).sum(0))
print(f"gradients accumulated across {len(fresh)} steps: {accumulated}")
