# source: written for bench/holdout5 (short training program, count regression with predictions rounded to whole numbers)
# symptom: first-layer grad sum: 0\.0000
import torch
from torch import nn

torch.manual_seed(20)

features = torch.rand(128, 4)
counts = torch.poisson(5 * features.sum(dim=1, keepdim=True))

net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(net.parameters(), lr=1e-3)

for epoch in range(15):
    opt.zero_grad()
    predicted = torch.round(net(features))
    loss = ((predicted - counts) ** 2).mean()
    loss.backward()  # expect: AG010
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch}: mse {loss.item():.3f}")

print(f"first-layer grad sum: {net[0].weight.grad.abs().sum().item():.4f}")

with torch.no_grad():
    sample = torch.round(net(features[:5])).squeeze(1)
print("sample predictions:", sample.tolist())
print("sample targets:   ", counts[:5].squeeze(1).tolist())
mae = (torch.round(net(features)) - counts).abs().mean().item()
print(f"mean absolute error: {mae:.3f}")
