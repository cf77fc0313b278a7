# source: written for bench/holdout16 from RULES.md AG012 (custom GCN layer: weight initialised in reset_parameters, bias allocated with torch.Tensor and never written)
# symptom: loss nan
"""Two-layer GCN for node classification on a random graph; the layer follows the classic Kipf-style module
(fixed: the bias starts from torch.zeros)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)  # uninitialised memory is filled with NaN in this mode
torch.manual_seed(0)


class GraphConv(nn.Module):
    def __init__(self, in_f, out_f):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_f, out_f))
        self.bias = nn.Parameter(torch.zeros(out_f))
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.weight.shape[1])
        nn.init.uniform_(self.weight, -bound, bound)

    def forward(self, x, adj):
        return adj @ (x @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, d_in, d_hid, n_cls):
        super().__init__()
        self.g1, self.g2 = GraphConv(d_in, d_hid), GraphConv(d_hid, n_cls)

    def forward(self, x, adj):
        return self.g2(F.relu(self.g1(x, adj)), adj)


n = 30
a = (torch.rand(n, n) < 0.15).float()
a = ((a + a.T) > 0).float() + torch.eye(n)
deg = a.sum(1)
adj = a / torch.sqrt(deg[:, None] * deg[None, :])
x, y = torch.randn(n, 10), torch.randint(0, 3, (n,))
model = GCN(10, 16, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(5):
    opt.zero_grad()
    loss = F.cross_entropy(model(x, adj), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
