# source: https://github.com/pyg-team/pytorch_geometric/commit/5b7dcc6ecab6c9c56276b3ade992b0b08af89f0b
# symptom: torch\.range is deprecated
"""pyg-team/pytorch_geometric torch_geometric/nn/norm/diff_norm.py after "changed range to
arange" (fixed): the class ids are counted with `torch.arange(0, int(max(c)) + 1, device=device,
dtype=int)` (the same values, without the deprecated `torch.range`); the commit also adds an `eps`
to the ratio's denominators and passes `dim=1` to the softmax."""
import torch
import torch.nn.functional as F
from torch import Tensor, cdist, nn
from torch.nn import BatchNorm1d, Linear


class DiffNorm(nn.Module):
    """differentiable group normalization"""

    def __init__(self, in_channels=2, groups=3, lamda=0.01, momentum=0.3):
        super().__init__()
        self.G = groups
        self.nd = in_channels
        self.lamda = lamda
        self.U = Linear(self.nd, self.G, bias=False)
        self.bn = BatchNorm1d(self.G * self.nd, momentum=momentum)

    def groupDistanceRatio(self, h: Tensor, c: Tensor, eps: float = 1e-9) -> float:
        """ratio of average inter cluster distance to intra cluster distance"""
        device = h.device
        if c.dim() == 1:
            c = c.unsqueeze(1)
        if h.dim() == 1:
            h = h.unsqueeze(1)
        bin_count = torch.bincount(
            torch.cat([
                c.squeeze(1),
                torch.arange(0, int(max(c)) + 1, device=device, dtype=int)
            ])) - 1
        counts = torch.index_select(bin_count, 0, c.squeeze(1))
        denom = torch.pow(counts.repeat(len(c), 1).float() * counts.repeat(len(c), 1).T, -1.0)
        pair_dist = cdist(h, h, p=2)
        pair_dist = pair_dist * denom
        del denom, counts, bin_count
        same_class = c.repeat(1, len(h)) == c.repeat(1, len(h)).T
        inter_dist = torch.sum(torch.where(~same_class, pair_dist, torch.zeros(pair_dist.shape, device=device)))
        intra_dist = torch.sum(torch.where(same_class, pair_dist, torch.zeros(pair_dist.shape, device=device)))
        del same_class
        C = len(torch.unique(c))
        return float((C / (eps + C - 1.0)**2) * (inter_dist / (eps + intra_dist)))

    def forward(self, x: Tensor) -> Tensor:
        N = len(x)
        S = F.softmax(self.U(x), dim=1)  # dim=N*G
        S_broad = S.T.reshape(self.G, N, 1).repeat(1, 1, self.nd)  # dim=G*N*nd
        xg = (S_broad * x).permute(1, 0, 2).reshape(N, self.G * self.nd)
        xg = self.bn(xg)
        sum_xg = xg.view(-1, self.G, self.nd).sum(1)
        return x + self.lamda * sum_xg


class GCN(nn.Module):
    def __init__(self, in_channels, hidden, num_classes):
        super().__init__()
        self.lin1 = Linear(in_channels, hidden)
        self.norm = DiffNorm(hidden, groups=num_classes)
        self.lin2 = Linear(hidden, num_classes)

    def forward(self, x, adj):
        h = F.relu(self.norm(adj @ self.lin1(x)))
        return self.lin2(adj @ h), h


def main():
    torch.manual_seed(0)
    n, num_classes = 30, 3
    x = torch.randn(n, 8)
    y = torch.randint(0, num_classes, (n,))
    adj = (torch.rand(n, n) < 0.2).float() + torch.eye(n)
    adj = adj / adj.sum(1, keepdim=True)
    model = GCN(8, 16, num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(3):
        model.train()
        optimizer.zero_grad()
        out, h = model(x, adj)
        loss = F.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        gdr = model.norm.groupDistanceRatio(h.detach(), y)
        print('epoch', epoch, 'loss %.4f' % loss.item(), 'group distance ratio %.4f' % gdr)


if __name__ == '__main__':
    main()
