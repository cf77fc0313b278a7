# source: written for bench/holdout17 from RULES.md AG004 (GNN explainer: a learnable edge mask made with ones_like of the long edge_index row)
# symptom: [Oo]nly Tensors of floating point (and complex )?dtype can require gradients
"""GNNExplainer-style soft edge mask over a two-layer mean-aggregation GCN."""
import torch
import torch.nn as nn


class MeanGCN(nn.Module):
    def __init__(self, d_in, d_hid, n_cls):
        super().__init__()
        self.l1 = nn.Linear(d_in, d_hid)
        self.l2 = nn.Linear(d_hid, n_cls)

    def propagate(self, x, edge_index, edge_weight):
        src, dst = edge_index
        out = torch.zeros_like(x).index_add(0, dst, x[src] * edge_weight.unsqueeze(-1))
        deg = torch.zeros(x.size(0)).index_add(0, dst, edge_weight).clamp(min=1)
        return out / deg.unsqueeze(-1)

    def forward(self, x, edge_index, edge_weight):
        h = torch.relu(self.l1(self.propagate(x, edge_index, edge_weight)))
        return self.l2(self.propagate(h, edge_index, edge_weight))


def explain_node(model, x, edge_index, node, steps=30):
    edge_mask = torch.ones_like(edge_index[0]).requires_grad_()  # expect: AG004
    opt = torch.optim.Adam([edge_mask], lr=0.05)
    target = model(x, edge_index, torch.ones(edge_index.size(1))).argmax(-1)[node]
    for _ in range(steps):
        m = torch.sigmoid(edge_mask)
        logp = torch.log_softmax(model(x, edge_index, m), -1)[node, target]
        loss = -logp + 0.005 * m.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return torch.sigmoid(edge_mask).detach()


torch.manual_seed(0)
x = torch.randn(30, 8)
edge_index = torch.randint(0, 30, (2, 120))
model = MeanGCN(8, 16, 3).eval()
for p in model.parameters():
    p.requires_grad_(False)
mask = explain_node(model, x, edge_index, node=4)
print("top edges:", mask.topk(5).indices.tolist())
