# source: holdout11 short program (no report)
# symptom: loss nan
"""Custom linear layer with nn.Parameter(torch.Tensor(out, in)) weights initialised by reset_parameters() in __init__."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)  # debugging aid: uninitialised memory reads as NaN
torch.manual_seed(0)


class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(out_features, in_features))
        self.bias = nn.Parameter(torch.Tensor(out_features))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(self.weight.shape[1])
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


model = nn.Sequential(MyLinear(4, 16), nn.ReLU(), MyLinear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
X = torch.randn(100, 4)
y = X[:, :1] * 2 - X[:, 1:2]
for epoch in range(5):
    opt.zero_grad()
    loss = F.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
