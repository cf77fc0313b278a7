# source: holdout13 short program (no report)
# symptom: backward through the graph a second time|modified by an inplace operation
"""Two-layer graph convolution written by hand, with a learnable gate on every edge (node classification)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_nodes, n_feat, n_cls = 30, 8, 3
x = torch.randn(n_nodes, n_feat)
labels = torch.randint(0, n_cls, (n_nodes,))
adj_mask = (torch.rand(n_nodes, n_nodes) < 0.15).float()
adj_mask = ((adj_mask + adj_mask.t()) > 0).float() + torch.eye(n_nodes)

edge_logits = nn.Parameter(torch.zeros(n_nodes, n_nodes))
w1 = nn.Parameter(torch.randn(n_feat, 16) * 0.3)
w2 = nn.Parameter(torch.randn(16, n_cls) * 0.3)
opt = torch.optim.Adam([edge_logits, w1, w2], lr=0.01)

adj = torch.sigmoid(edge_logits) * adj_mask  # expect: AG002


def gcn(features, a):
    h = torch.relu(a @ features @ w1)
    return a @ h @ w2


train_idx = torch.arange(0, 20)
for epoch in range(5):
    for batch in train_idx.split(10):
        opt.zero_grad()
        out = gcn(x, adj)
        loss = F.cross_entropy(out[batch], labels[batch])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
