# source: https://github.com/zeakey/iccv2019-fmeasure/issues/1
# symptom: grad can be implicitly created only for scalar outputs
# Clean twin: FLoss averages the per-image losses over the batch (`return floss.mean()`, as later copies of the
# loss do); the training step is unchanged.
import torch
import torch.nn as nn


class FLoss(nn.Module):
    def __init__(self, beta=0.3, log_like=False):
        super().__init__()
        self.beta = beta
        self.log_like = log_like

    def forward(self, prediction, target):
        EPS = 1e-10
        N = prediction.size(0)
        TP = (prediction * target).view(N, -1).sum(dim=1)
        H = self.beta * target.view(N, -1).sum(dim=1) + prediction.view(N, -1).sum(dim=1)
        fmeasure = (1 + self.beta) * TP / (H + EPS)
        if self.log_like:
            floss = -torch.log(fmeasure)
        else:
            floss = 1 - fmeasure
        return floss.mean()


class SaliencyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


torch.manual_seed(0)
net = SaliencyNet()
fl = FLoss(beta=0.3)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    images = torch.rand(4, 3, 16, 16)
    target = (torch.rand(4, 1, 16, 16) > 0.7).float()
    output = net(images)
    loss = fl(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} floss {loss.mean().item():.4f}")
