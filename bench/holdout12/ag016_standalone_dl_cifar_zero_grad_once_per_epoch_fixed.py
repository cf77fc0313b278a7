# source: https://github.com/heartcored98/Standalone-DeepLearning/issues/11
# symptom: gradients carried over from the previous step: True
"""Standalone-DeepLearning `Lec5/Lab7_CIFAR-10_with_CNN.ipynb`: `train()` calls `optimizer.zero_grad()`
once, before the loop over the epoch's minibatches, and then runs `loss.backward()` and
`optimizer.step()` for every batch, so each step uses the gradients of all earlier batches of the epoch
(the reporter asks whether it should not come before every backward; the author agreed and fixed every
lab). The program records whether a backward started from earlier gradients.

Fixed as the author did in the labs: `optimizer.zero_grad()` inside the batch loop, before each
forward and backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CNN(nn.Module):
    def __init__(self, in_channel=3, out_dim=10):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channel, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, out_dim)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.view(x.size(0), -1))


def train(net, trainloader, optimizer, criterion):
    net.train()
    correct, total, train_loss, carried = 0, 0, 0.0, False
    for i, (inputs, labels) in enumerate(trainloader):
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        carried = carried or any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in net.parameters())
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
        _, predicted = torch.max(outputs.detach(), 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return train_loss / len(trainloader), 100 * correct / total, carried


def main():
    net = CNN()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    trainloader = [(torch.randn(16, 3, 16, 16), torch.randint(0, 10, (16,))) for _ in range(6)]
    carried_any = False
    for epoch in range(2):
        train_loss, train_acc, carried = train(net, trainloader, optimizer, criterion)
        carried_any = carried_any or carried
        print(f"epoch {epoch}: train loss {train_loss:.3f}, train acc {train_acc:.1f}")
    print(f"gradients carried over from the previous step: {carried_any}")


if __name__ == "__main__":
    main()
