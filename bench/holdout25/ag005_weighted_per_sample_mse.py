# source: written for holdout25 (pattern: importance-weighted regression uses MSELoss(reduction='none') and calls backward on the per-sample loss vector)
# symptom: grad can be implicitly created only for scalar outputs
"""House-price style regression where recent samples get a larger weight."""
import torch
import torch.nn as nn

torch.manual_seed(0)

N, D = 400, 8
features = torch.randn(N, D)
true_w = torch.randn(D, 1)
prices = features @ true_w + 0.2 * torch.randn(N, 1)
age = torch.rand(N, 1)  # 0 = newest sale, 1 = oldest
sample_weight = torch.exp(-2.0 * age)

model = nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Linear(32, 1))
criterion = nn.MSELoss(reduction="none")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def weighted_loss(pred, target, weight):
    per_sample = criterion(pred, target)
    return per_sample * weight / weight.mean()


for epoch in range(10):
    perm = torch.randperm(N)
    for i in range(0, N, 40):
        idx = perm[i:i + 40]
        pred = model(features[idx])
        loss = weighted_loss(pred, prices[idx], sample_weight[idx])
        optimizer.zero_grad()
        loss.backward()  # expect: AG005
        optimizer.step()
    if epoch % 3 == 0:
        with torch.no_grad():
            mse = ((model(features) - prices) ** 2).mean().item()
        print(f"epoch {epoch}: train mse {mse:.4f}")
