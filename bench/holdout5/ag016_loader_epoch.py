# source: written for bench/holdout5 (short training program, train/evaluate helper functions over a DataLoader)
# symptom: grad norm grew: True
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(30)


def make_loader():
    X = torch.randn(400, 6)
    y = (X[:, :2].sum(1) > 0).long()
    return DataLoader(TensorDataset(X, y), batch_size=40, shuffle=True)


def train_epoch(model, loader, optimizer, loss_fn):
    norms = []
    model.train()
    for xb, yb in loader:
        out = model(xb)
        loss = loss_fn(out, yb)
        loss.backward()  # expect: AG016
        optimizer.step()
        norms.append(torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item())
    return loss.item(), norms


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in loader)
    return correct / len(loader.dataset)


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = make_loader()
first_norms = None
for epoch in range(3):
    loss, norms = train_epoch(model, loader, optimizer, nn.CrossEntropyLoss())
    first_norms = first_norms or norms
    print(f"epoch {epoch}: loss {loss:.3f} acc {evaluate(model, loader):.2f}")
print("grad norm grew:", norms[-1] > 2 * first_norms[0])
