# source: written for bench/holdout17 from RULES.md AG012 (message-passing layer allocates its aggregation buffer with torch.Tensor(n, d) and index_add_s the messages into it)
# symptom: loss nan
"""Sum-aggregation GNN layer on a random graph (node regression). Deterministic mode fills uninitialised memory with NaN."""
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)


class SumConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.msg = nn.Linear(d_in, d_out)
        self.self_loop = nn.Linear(d_in, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        messages = self.msg(x)[src]
        agg = torch.zeros(x.size(0), messages.size(1))
        agg = agg.index_add(0, dst, messages)
        return torch.relu(agg + self.self_loop(x))


class GNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = SumConv(6, 16), SumConv(16, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x, edge_index):
        return self.out(self.c2(self.c1(x, edge_index), edge_index)).squeeze(-1)


torch.manual_seed(0)
x = torch.randn(40, 6)
edge_index = torch.randint(0, 40, (2, 160))
y = torch.randn(40)
model = GNN()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(3):
    loss = nn.functional.mse_loss(model(x, edge_index), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
