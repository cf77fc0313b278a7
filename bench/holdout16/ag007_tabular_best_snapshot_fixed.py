# source: written for bench/holdout16 from RULES.md AG007 (plain loop keeps the best weights with tuple unpacking under no_grad)
# symptom: best snapshot requires grad: True
"""Linear regression on house prices (synthetic) with early stopping on a validation split
(fixed: the snapshot is detached and cloned)."""
import torch

torch.manual_seed(0)
X = torch.randn(200, 5)
true_w = torch.tensor([3.0, -2.0, 0.5, 0.0, 1.0])
y = X @ true_w + 0.3 * torch.randn(200)
X_tr, y_tr, X_va, y_va = X[:150], y[:150], X[150:], y[150:]

w = torch.zeros(5, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.05)
best_val, best_w, best_b = float("inf"), None, None

for epoch in range(40):
    opt.zero_grad()
    loss = ((X_tr @ w + b - y_tr) ** 2).mean()
    loss.backward()
    opt.step()
    with torch.no_grad():
        val = ((X_va @ w + b - y_va) ** 2).mean().item()
        if val < best_val:
            best_val = val
            best_w, best_b = w.detach().clone(), b.detach().clone()

print(f"best val mse {best_val:.4f}")
print(f"best snapshot requires grad: {best_w.requires_grad}")
