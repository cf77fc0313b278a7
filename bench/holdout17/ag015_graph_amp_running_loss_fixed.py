# source: written for bench/holdout17 from RULES.md AG015 (train_epoch function with CPU autocast: the running loss is summed as a tensor for the progress line)
# symptom: running loss keeps a graph: True
"""Graph classification with a dense-adjacency GCN, bfloat16 autocast on CPU, and a plateau scheduler."""
import torch
import torch.nn as nn


class DenseGCN(nn.Module):
    def __init__(self, d_in=5, hid=32, n_cls=2):
        super().__init__()
        self.l1, self.l2 = nn.Linear(d_in, hid), nn.Linear(hid, hid)
        self.cls = nn.Linear(hid, n_cls)

    def forward(self, x, adj):
        deg = adj.sum(-1, keepdim=True).clamp(min=1)
        h = torch.relu(self.l1(adj @ x / deg))
        h = torch.relu(self.l2(adj @ h / deg))
        return self.cls(h.mean(1))


def train_epoch(model, graphs, optimizer):
    model.train()
    running = 0.0
    for x, adj, y in graphs:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x, adj), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / len(graphs)


torch.manual_seed(0)
graphs = []
for _ in range(6):
    adj = (torch.rand(4, 12, 12) > 0.7).float()
    graphs.append((torch.randn(4, 12, 5), ((adj + adj.transpose(1, 2)) > 0).float(), torch.randint(0, 2, (4,))))
model = DenseGCN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1)
for epoch in range(2):
    epoch_loss = train_epoch(model, graphs, optimizer)
    scheduler.step(float(epoch_loss))
    print(f"epoch {epoch} loss {float(epoch_loss):.4f}")
print("running loss keeps a graph:", isinstance(epoch_loss, torch.Tensor) and epoch_loss.grad_fn is not None)
