# source: written for bench/holdout17 from RULES.md AG001 (hand-rolled logistic regression; a decoupled weight-decay helper scales the leaves in place before backward)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Credit-default logistic regression with manual parameters and a decoupled weight-decay helper."""
import torch

torch.manual_seed(0)
CFG = {"features": 12, "lr": 0.1, "wd": 1e-3, "epochs": 3, "batch": 32}

X = torch.randn(256, CFG["features"])
y = (X[:, 0] - 0.5 * X[:, 3] > 0).float()

w = torch.zeros(CFG["features"], requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def decay(params, wd):
    with torch.no_grad():
        for p in params:
            p.mul_(1.0 - wd)


def sgd(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


for epoch in range(CFG["epochs"]):
    perm = torch.randperm(X.shape[0])
    for i in range(0, X.shape[0], CFG["batch"]):
        idx = perm[i:i + CFG["batch"]]
        logits = X[idx] @ w + b
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y[idx])
        decay([w, b], CFG["wd"])
        loss.backward()
        sgd([w, b], CFG["lr"])
    print(f"epoch {epoch} loss {loss.item():.4f}")
