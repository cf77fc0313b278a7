# source: holdout11 short program (no report)
# symptom: running loss keeps graph: True
"""Plain classifier training script; the epoch's running loss is summed from the loss tensors."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X, y = torch.randn(320, 20), torch.randint(0, 5, (320,))

for epoch in range(3):
    running_loss = 0.0
    model.train()
    for i in range(0, len(X), 32):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
        running_loss += loss  # expect: AG015
    print(f"epoch {epoch} mean loss {float(running_loss) / 10:.4f}")
print("running loss keeps graph:", getattr(running_loss, "grad_fn", None) is not None)
