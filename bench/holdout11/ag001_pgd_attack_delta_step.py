# source: holdout11 short program (no report)
# symptom: leaf Variable that requires grad
"""PGD adversarial attack on a small CNN; the perturbation update lives in a helper called from the attack loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def ascend(delta, alpha, eps):
    delta.add_(alpha * delta.grad.sign())  # expect: AG001
    delta.clamp_(-eps, eps)
    delta.grad.zero_()


def pgd(model, x, y, eps=0.1, alpha=0.02, steps=5):
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(steps):
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        ascend(delta, alpha, eps)
    return (x + delta).detach()


model = SmallCNN()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(2):
    x = torch.rand(16, 1, 28, 28)
    y = torch.randint(0, 10, (16,))
    x_adv = pgd(model, x, y)
    opt.zero_grad()
    loss = F.cross_entropy(model(x_adv), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} adv loss {loss.item():.4f}")
