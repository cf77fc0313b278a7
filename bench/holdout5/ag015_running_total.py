# source: written for bench/holdout5 (short training program, classic epoch loop reporting the mean loss)
# symptom: grad_fn=<
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(27)

ds = TensorDataset(torch.randn(320, 8), torch.randint(0, 2, (320,)).float())
loader = DataLoader(ds, batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        hits = sum(((model(xb).squeeze(1) > 0).float() == yb).sum().item() for xb, yb in loader)
    model.train()
    return hits / len(loader.dataset)


for epoch in range(3):
    running_loss = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb).squeeze(1), yb)
        loss.backward()
        optimizer.step()
        running_loss += loss  # expect: AG015
    print(f"epoch {epoch}: mean loss", running_loss / len(loader), "acc", evaluate(model, loader))
