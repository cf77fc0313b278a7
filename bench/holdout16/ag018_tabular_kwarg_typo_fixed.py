# source: written for bench/holdout16 from RULES.md AG018 (hand-written logistic regression: a misspelt requires_grad keyword in the parameter factory inside an init function)
# symptom: TypeError: .*unexpected keyword argument|TypeError: .*requires_grads
"""Logistic regression for loan approval on synthetic tabular data, parameters created by hand
(fixed: requires_grad)."""
import torch

torch.manual_seed(0)


def init_params(n_features):
    w = torch.zeros(n_features, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return w, b


X = torch.randn(256, 4)
y = (X[:, 0] - 0.5 * X[:, 2] > 0).float()
w, b = init_params(4)
optimizer = torch.optim.Adam([w, b], lr=0.1)
for epoch in range(10):
    optimizer.zero_grad()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(X @ w + b, y)
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
