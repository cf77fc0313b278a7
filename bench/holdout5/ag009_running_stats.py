# source: written for bench/holdout5 (short training program, input normaliser with running statistics, regression)
# symptom: running_mean saved in state_dict: False
import torch
from torch import nn

torch.manual_seed(18)


class RunningNorm(nn.Module):
    def __init__(self, n_features, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.running_mean = torch.zeros(n_features)  # expect: AG009

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.running_mean.lerp_(x.mean(0), self.momentum)
        return x - self.running_mean


model = nn.Sequential(RunningNorm(3), nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.001)
X = torch.randn(200, 3) + 5
y = X[:, :1] * 0.5 - X[:, 1:2]

for epoch in range(30):
    opt.zero_grad()
    loss = ((model(X) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")

state = model.state_dict()
print("saved keys:", sorted(state))
print("running_mean saved in state_dict:", "0.running_mean" in state)
