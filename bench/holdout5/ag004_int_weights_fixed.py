# source: written for bench/holdout5 (short training program, logistic regression from scratch on a toy dataset)
import torch
import torch.nn.functional as F

torch.manual_seed(7)

n = 200
X = torch.randn(n, 3)
labels = (X[:, 0] + 2 * X[:, 1] - X[:, 2] > 0).float()

w = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.5)

for epoch in range(100):
    logits = X @ w + b
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 20 == 0:
        print(f"epoch {epoch}: loss {loss.item():.4f}")

with torch.no_grad():
    acc = ((X @ w + b > 0).float() == labels).float().mean()
print(f"final loss {loss.item():.3f} accuracy {acc.item():.2f}")
print("learned weights:", [round(v, 3) for v in w.detach().tolist()], "bias:", round(b.item(), 3))
print("true direction: [1, 2, -1]")
