# source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976/2
# symptom: modified by an inplace operation
"""PyTorch forum: the data flow bifurcates after `conv1`: `x_p = self.conv1_p(x)` feeds a side branch,
then the main branch continues with `x += some_layer`. `conv1_p` saved `x` (its input) for the weight
gradient, so the in-place add breaks the backward; the same `out += residual` in ResNet is fine because
there `out` is a batch-norm output nobody saved.

Fixed as the thread did: `x = x + some_layer`, a new tensor, leaves the saved `x` alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TwoBranchNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1_p = nn.Conv2d(8, 8, 3, padding=1)
        self.shortcut = nn.Conv2d(3, 8, 1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.head = nn.Linear(8, num_classes)
        self.head_p = nn.Linear(8, num_classes)

    def forward(self, input):
        x = self.conv1(input)  # main branch
        x_p = self.conv1_p(x)  # another branch
        some_layer = self.shortcut(input)
        x = x + some_layer
        x = F.relu(self.conv2(x))
        main = self.head(x.mean(dim=(2, 3)))
        side = self.head_p(F.relu(x_p).mean(dim=(2, 3)))
        return main + side


def main():
    net = TwoBranchNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    images = torch.randn(6, 3, 16, 16)
    labels = torch.randint(0, 4, (6,))
    for step in range(4):
        optimizer.zero_grad()
        loss = F.cross_entropy(net(images), labels)
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
