# source: holdout11 short program (no report)
# symptom: object is not subscriptable
"""XOR MLP written top to bottom; the targets tensor is built with torch.tensor([...])."""
import torch
import torch.nn as nn

torch.manual_seed(0)

inputs = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
targets = torch.tensor([[0.0], [1.0], [1.0], [0.0]])

model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

for epoch in range(500):
    optimizer.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    optimizer.step()
    if epoch % 100 == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}")

print("predictions", model(inputs).detach().round().view(-1).tolist())
