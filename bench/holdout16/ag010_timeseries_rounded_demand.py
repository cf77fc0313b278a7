# source: written for bench/holdout16 from RULES.md AG010 (demand forecaster rounds its prediction to whole units inside the loss path; all-zero grads)
# symptom: all gradients zero: True
"""Retail demand forecasting from lagged sales (synthetic): predictions are whole units."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class DemandModel(nn.Module):
    def __init__(self, lags=7):
        super().__init__()
        self.lin = nn.Linear(lags, 1)

    def forward(self, lagged):
        return self.lin(lagged).squeeze(-1).clamp(min=0).round()


sales = torch.poisson(torch.full((300,), 5.0)) + torch.arange(300) % 7
X = torch.stack([sales[i:i + 7] for i in range(290)])
y = sales[7:297]
model = DemandModel()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
all_zero = True
for epoch in range(5):
    opt.zero_grad()
    loss = (model(X) - y).abs().mean()
    loss.backward()  # expect: AG010
    all_zero &= all(bool((p.grad == 0).all()) for p in model.parameters())
    opt.step()
    print(f"epoch {epoch} mae {loss.item():.3f}")
print(f"all gradients zero: {all_zero}")
