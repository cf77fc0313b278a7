# source: https://github.com/pytorch/pytorch/issues/95110
# symptom: [Oo]nly Tensors of floating point( and complex)? dtype can require gradients
# The user took the predicted class indices from torch.max(outputs, 1) (a LongTensor) and set
# `.requires_grad = True` on them to train through the predictions. Re-created in a small classifier's train step.
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in=10, n_classes=4):
        super().__init__()
        self.fc1 = nn.Linear(n_in, 32)
        self.fc2 = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def train_step(model, optimizer, criterion, inputs, labels):
    optimizer.zero_grad()
    outputs = model(inputs)
    _, predicted = torch.max(outputs, 1)
    predicted.requires_grad = True  # expect: AG004
    loss = criterion(predicted.float(), labels.float())
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()
inputs, labels = torch.randn(16, 10), torch.randint(0, 4, (16,))
for epoch in range(3):
    print(epoch, train_step(model, optimizer, criterion, inputs, labels))
