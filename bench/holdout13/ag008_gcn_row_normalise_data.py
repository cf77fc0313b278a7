# source: holdout13 short program (no report)
# symptom: grads match reference: False
"""Hand-written graph convolution layers whose node states are L2-normalised row by row in the module's `forward`;
the first step's gradients are checked against the same model written with plain tensor ops."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj):
        h = torch.relu(adj @ self.lin(x))
        h.data.div_(h.data.norm(dim=1, keepdim=True) + 1e-6)  # expect: AG008
        return h


def reference_forward(layers, head, x, adj):
    for layer in layers:
        h = torch.relu(adj @ layer.lin(x))
        x = h / (h.norm(dim=1, keepdim=True) + 1e-6)
    return head(x)


torch.manual_seed(0)
n = 40
a = (torch.rand(n, n) < 0.1).float() + torch.eye(n)
adj = a / a.sum(1, keepdim=True)
x, labels = torch.randn(n, 6), torch.randint(0, 2, (n,))
layers = nn.ModuleList([GCNLayer(6, 16), GCNLayer(16, 16)])
head = nn.Linear(16, 2)
params = [*layers.parameters(), *head.parameters()]
opt = torch.optim.Adam(params, lr=1e-2)
for epoch in range(20):
    if epoch == 0:
        ref = torch.autograd.grad(F.cross_entropy(reference_forward(layers, head, x, adj), labels), params)
    opt.zero_grad()
    h = x
    for layer in layers:
        h = layer(h, adj)
    loss = F.cross_entropy(head(h), labels)
    loss.backward()
    if epoch == 0:
        match = all(torch.allclose(p.grad, r, atol=1e-6) for p, r in zip(params, ref))
    opt.step()
print(f"loss {loss.item():.4f}")
print(f"grads match reference: {match}")
