# source: written for bench/holdout5 (short training program, classifier trained directly on its error rate)
import torch
from torch import nn

torch.manual_seed(19)

model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

pts = torch.randn(300, 2)
labels = (pts.norm(dim=1) > 1.0).long()


def error_rate(logits, y):
    return (logits.argmax(dim=1) != y).float().mean()


for epoch in range(10):
    for i in range(0, 300, 50):
        xb, yb = pts[i:i + 50], labels[i:i + 50]
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        print(f"epoch {epoch}: error {error_rate(model(pts), labels).item():.3f}")

with torch.no_grad():
    grid = torch.tensor([[0.0, 0.0], [2.0, 0.0], [0.0, -2.0]])
    print("grid predictions:", model(grid).argmax(dim=1).tolist(), "expected [0, 1, 1]")
