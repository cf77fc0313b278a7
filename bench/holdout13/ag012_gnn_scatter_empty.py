# source: holdout13 short program (no report)
# symptom: loss nan
"""Message-passing network written by hand (edge messages summed into nodes with `index_add_`, GRU-cell update),
regressing a per-graph target. Debugging aid: deterministic mode fills uninitialised memory with NaN."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)


class MessagePassing(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.msg = nn.Linear(2 * d, d)
        self.upd = nn.GRUCell(d, d)

    def forward(self, h, edges):
        src, dst = edges
        m = torch.relu(self.msg(torch.cat([h[src], h[dst]], 1)))
        agg = torch.empty(h.shape[0], h.shape[1])  # expect: AG012
        agg.index_add_(0, dst, m)
        return self.upd(agg, h)


torch.manual_seed(0)
graphs = []
for _ in range(16):
    n = int(torch.randint(5, 12, ()))
    edges = torch.randint(0, n, (2, 3 * n))
    graphs.append((torch.randn(n, 8), edges, torch.randn(1)))
layer, readout = MessagePassing(8), nn.Linear(8, 1)
opt = torch.optim.Adam([*layer.parameters(), *readout.parameters()], lr=1e-2)
for epoch in range(3):
    for h, edges, target in graphs:
        opt.zero_grad()
        for _ in range(2):
            h = layer(h, edges)
        loss = F.mse_loss(readout(h.mean(0)), target)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
