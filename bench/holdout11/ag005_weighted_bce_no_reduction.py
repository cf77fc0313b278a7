# source: holdout11 short program (no report)
# symptom: grad can be implicitly created only for scalar outputs
"""Class-weighted binary classifier: the loss is computed with reduction='none', weighted per sample, and backpropagated as a vector."""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.BCEWithLogitsLoss(reduction="none")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
pos_weight = 3.0


def train_step(x, y):
    optimizer.zero_grad()
    logits = model(x).squeeze(1)
    per_sample = criterion(logits, y)
    weights = torch.where(y > 0.5, torch.full_like(y, pos_weight), torch.ones_like(y))
    loss = per_sample * weights
    loss.backward()  # expect: AG005
    optimizer.step()
    return loss.mean().item()


for epoch in range(5):
    x = torch.randn(64, 8)
    y = (torch.rand(64) < 0.2).float()
    print(f"epoch {epoch} loss {train_step(x, y):.4f}")
