# source: written for bench/holdout16 from RULES.md AG002 (relational GCN: per-relation weights stacked once before the epoch loop)
# symptom: stacked relation weights stale during training: True
"""A tiny relational graph convolution on a random multi-relational graph, node classification
(fixed: the relation weights are stacked in every step)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
n_nodes, n_rel, d_in, n_cls = 40, 3, 8, 4
adj = (torch.rand(n_rel, n_nodes, n_nodes) < 0.1).float()
adj = adj / adj.sum(-1, keepdim=True).clamp(min=1.0)
feats = torch.randn(n_nodes, d_in)
labels = torch.randint(0, n_cls, (n_nodes,))

rel_weights = [torch.nn.Parameter(torch.randn(d_in, n_cls) * 0.1) for _ in range(n_rel)]
self_loop = torch.nn.Parameter(torch.randn(d_in, n_cls) * 0.1)
optimizer = torch.optim.Adam(rel_weights + [self_loop], lr=0.05)



def rgcn_layer(x, W):
    msgs = torch.einsum("rij,jd,rdc->ic", adj, x, W)
    return msgs + x @ self_loop


stale = False
for epoch in range(15):
    optimizer.zero_grad()
    W = torch.stack(rel_weights)
    logits = rgcn_layer(feats, W)
    with torch.no_grad():
        stale |= not torch.equal(W, torch.stack(rel_weights))
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
print(f"stacked relation weights stale during training: {stale}")
