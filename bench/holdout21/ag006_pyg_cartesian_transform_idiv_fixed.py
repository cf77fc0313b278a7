# source: https://github.com/pyg-team/pytorch_geometric/commit/30e86fc086eae2d8b7ff383dff0b4287273ccef8
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""pyg-team/pytorch_geometric torch_geometric/transform/cartesian.py after "fixed backprop"
(fixed): the edge vectors are normalised out of place, `cart = cart / (2 * cart.abs().max())`, so
the tensor `abs()` saved for backward is left unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Data(object):
    def __init__(self, input, pos, index, weight, target):
        self.input, self.pos, self.index, self.weight, self.target = input, pos, index, weight, target


class Cartesian(object):
    """Saves the globally normalized spatial relation of linked nodes as Cartesian coordinates
    (mapped to [0, 1]) in its edge attributes."""

    def __init__(self, cat=True):
        self.cat = cat

    def __call__(self, data):
        (row, col), pos, pseudo = data.index, data.pos, data.weight
        cart = pos[col] - pos[row]
        cart = cart / (2 * cart.abs().max())
        cart += 0.5
        cart = cart.view(-1, 1) if cart.dim() == 1 else cart
        if pseudo is not None and self.cat:
            pseudo = pseudo.view(-1, 1) if pseudo.dim() == 1 else pseudo
            data.weight = torch.cat([pseudo, cart.type_as(pseudo)], dim=-1)
        else:
            data.weight = cart
        return data


class EdgeConv(nn.Module):
    """pseudo-coordinate weighted convolution (a SplineConv stand-in)"""

    def __init__(self, in_channels, out_channels, dim):
        super().__init__()
        self.kernel = nn.Linear(dim, in_channels * out_channels)
        self.root = nn.Linear(in_channels, out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels

    def forward(self, x, index, pseudo):
        row, col = index
        w = self.kernel(pseudo).view(-1, self.in_channels, self.out_channels)
        msg = torch.bmm(x[col].unsqueeze(1), w).squeeze(1)
        out = torch.zeros(x.size(0), self.out_channels).index_add(0, row, msg)
        return out + self.root(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = nn.Linear(1, 2)
        self.conv1 = EdgeConv(1, 16, dim=2)
        self.conv2 = EdgeConv(16, 4, dim=2)
        self.transform = Cartesian(cat=False)

    def forward(self, data):
        # positions refined by the network, so the pseudo-coordinates depend on parameters
        data.pos = data.pos + 0.1 * torch.tanh(self.offset(data.input))
        data = self.transform(data)
        x = F.elu(self.conv1(data.input, data.index, data.weight))
        return F.log_softmax(self.conv2(x, data.index, data.weight), dim=1)


def main():
    torch.manual_seed(0)
    n = 20
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(2):
        pos = torch.rand(n, 2)
        index = torch.randint(0, n, (2, 60))
        data = Data(torch.ones(n, 1), pos, index, None, torch.randint(0, 4, (n,)))
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), data.target)
        loss.backward()
        optimizer.step()
    print('loss', loss.item())


if __name__ == '__main__':
    main()
