# source: https://github.com/samuelyu2002/ImVisible/issues/2
# symptom: running_loss still has a graph: True
# ImVisible's train loop kept running_loss += loss, running_loss_MSE += MSE and running_loss_cross_entropy +=
# cross_entropy (lines 97-99, and the validation twins at 165-167); the stored graphs ate the RAM. Fix: .item().
import torch
import torch.nn as nn


class LytNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(8, 5)
        self.regressor = nn.Linear(8, 4)

    def forward(self, x):
        f = self.features(x)
        return self.classifier(f), self.regressor(f)


def my_loss(pred_classes, pred_direc, points, labels):
    cross_entropy = nn.functional.cross_entropy(pred_classes, labels)
    MSE = nn.functional.mse_loss(pred_direc, points)
    return cross_entropy + 0.5 * MSE, MSE, cross_entropy


def train(net, trainloader, optimizer, num_epochs=1):
    for epoch in range(num_epochs):
        net.train()
        running_loss = 0.0
        running_loss_MSE = 0.0
        running_loss_cross_entropy = 0.0
        for j, data in enumerate(trainloader, 0):
            images, labels, points = data
            optimizer.zero_grad()
            pred_classes, pred_direc = net(images)
            loss, MSE, cross_entropy = my_loss(pred_classes, pred_direc, points, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss  # expect: AG015
            running_loss_MSE += MSE  # expect: AG015
            running_loss_cross_entropy += cross_entropy  # expect: AG015
        print(f"epoch {epoch}: loss {float(running_loss) / (j + 1):.4f}")
        print("running_loss still has a graph:", getattr(running_loss, "grad_fn", None) is not None)


torch.manual_seed(0)
net = LytNet()
loader = [(torch.randn(2, 3, 16, 16), torch.tensor([0, 4]), torch.rand(2, 4)) for _ in range(3)]
train(net, loader, torch.optim.Adam(net.parameters(), lr=1e-3))
