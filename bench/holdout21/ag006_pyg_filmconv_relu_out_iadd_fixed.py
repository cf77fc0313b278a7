# source: https://github.com/pyg-team/pytorch_geometric/commit/176e61d8b212aee4d4172200ee4dd97fddfc361b
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""pyg-team/pytorch_geometric torch_geometric/nn/conv/film_conv.py after "fix filmconv backward
error due to in-place ops" (fixed): the messages are added out of place,
`out = out + self.propagate(...)`, so the ReLU output saved for backward is left unchanged."""
import copy

import torch
from torch import Tensor
from torch.nn import Linear, ModuleList, ReLU


class MessagePassing(torch.nn.Module):
    """stand-in for torch_geometric's MessagePassing with mean aggregation"""

    def __init__(self, aggr='mean'):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index, x, beta, gamma, size=None):
        src, dst = edge_index
        msg = self.message(x[src], beta[dst], gamma[dst])
        out = torch.zeros(beta.size(0), msg.size(1)).index_add(0, dst, msg)
        deg = torch.zeros(beta.size(0)).index_add(0, dst, torch.ones(dst.numel())).clamp(min=1)
        return out / deg[:, None]


class FiLMConv(MessagePassing):
    def __init__(self, in_channels, out_channels, num_relations=1, nn=None, act=ReLU(), aggr='mean'):
        super().__init__(aggr=aggr)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = max(num_relations, 1)
        self.act = act
        if isinstance(in_channels, int):
            in_channels = (in_channels, in_channels)
        self.lins = ModuleList()
        self.films = ModuleList()
        for _ in range(num_relations):
            self.lins.append(Linear(in_channels[0], out_channels, bias=False))
            film = Linear(in_channels[1], 2 * out_channels) if nn is None else copy.deepcopy(nn)
            self.films.append(film)
        self.lin_skip = Linear(in_channels[1], self.out_channels, bias=False)
        self.film_skip = Linear(in_channels[1], 2 * self.out_channels, bias=False)

    def forward(self, x, edge_index, edge_type=None) -> Tensor:
        if isinstance(x, Tensor):
            x = (x, x)
        beta, gamma = self.film_skip(x[1]).split(self.out_channels, dim=-1)
        out = gamma * self.lin_skip(x[1]) + beta
        if self.act is not None:
            out = self.act(out)
        if self.num_relations <= 1:
            beta, gamma = self.films[0](x[1]).split(self.out_channels, dim=-1)
            out = out + self.propagate(edge_index, x=self.lins[0](x[0]),
                                       beta=beta, gamma=gamma, size=None)
        else:
            for i, (lin, film) in enumerate(zip(self.lins, self.films)):
                beta, gamma = film(x[1]).split(self.out_channels, dim=-1)
                mask = edge_type == i
                out = out + self.propagate(edge_index[:, mask], x=lin(
                    x[0]), beta=beta, gamma=gamma, size=None)
        return out

    def message(self, x_j, beta_i, gamma_i):
        out = gamma_i * x_j + beta_i
        if self.act is not None:
            out = self.act(out)
        return out


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, num_relations):
        super().__init__()
        self.conv1 = FiLMConv(in_channels, hidden, num_relations)
        self.conv2 = FiLMConv(hidden, out_channels, num_relations, act=None)

    def forward(self, x, edge_index, edge_type):
        x = self.conv1(x, edge_index, edge_type)
        return self.conv2(x, edge_index, edge_type)


def main():
    torch.manual_seed(0)
    num_nodes = 20
    x = torch.randn(num_nodes, 8)
    edge_index = torch.randint(0, num_nodes, (2, 60))
    edge_type = torch.randint(0, 2, (60,))
    y = torch.randint(0, 3, (num_nodes,))
    model = Net(8, 16, 3, num_relations=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(3):
        model.train()
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x, edge_index, edge_type), y)
        loss.backward()
        optimizer.step()
    print('loss', loss.item())


if __name__ == '__main__':
    main()
