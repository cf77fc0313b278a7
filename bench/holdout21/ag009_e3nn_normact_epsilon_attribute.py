# source: https://github.com/e3nn/e3nn/commit/9573a492d2a3634c687e6bab5c9b7cd4708be266
# symptom: epsilon left behind by \.to\(\): True
"""e3nn/e3nn e3nn/nn/normact.py before #202: NormActivation keeps its clamp threshold as a
plain tensor attribute, `self.epsilon = torch.as_tensor(epsilon)`, so moving the network
(`.to(device)`, `.to(dtype)`) leaves it behind ("Fix NormActivation on GPU")."""
import torch


class Norm(torch.nn.Module):
    """norm of each irrep of multiplicity `mul` and dimension `dim`"""

    def __init__(self, irreps):
        super().__init__()
        self.irreps = irreps  # list of (mul, dim)

    def forward(self, features):
        out, i = [], 0
        for mul, d in self.irreps:
            field = features[..., i:i + mul * d].reshape(*features.shape[:-1], mul, d)
            out.append(field.norm(dim=-1))
            i += mul * d
        return torch.cat(out, dim=-1)


class ElementwiseTensorProduct(torch.nn.Module):
    def __init__(self, irreps):
        super().__init__()
        self.irreps = irreps

    def forward(self, scalars, features):
        out, i, j = [], 0, 0
        for mul, d in self.irreps:
            field = features[..., i:i + mul * d].reshape(*features.shape[:-1], mul, d)
            out.append((scalars[..., j:j + mul, None] * field).reshape(*features.shape[:-1], mul * d))
            i += mul * d
            j += mul
        return torch.cat(out, dim=-1)


class NormActivation(torch.nn.Module):
    def __init__(self, irreps_in, scalar_nonlinearity, normalize=True, epsilon=1e-8, bias=False):
        super().__init__()
        self.irreps_in = irreps_in
        self.norm = Norm(irreps_in)
        self.scalar_nonlinearity = scalar_nonlinearity
        self.epsilon = torch.as_tensor(epsilon)  # expect: AG009
        self.normalize = normalize
        self.bias = bias
        if self.bias:
            self.biases = torch.nn.Parameter(torch.zeros(sum(m for m, _ in irreps_in)))
        self.scalar_multiplier = ElementwiseTensorProduct(irreps_in)

    def forward(self, features):
        norms = self.norm(features)
        if self.normalize:
            epsilon_norms = norms.clone()
            epsilon_norms[epsilon_norms < self.epsilon] = self.epsilon
            nonlin_arg = epsilon_norms
            if self.bias:
                nonlin_arg = nonlin_arg + self.biases
            scalings = self.scalar_nonlinearity(nonlin_arg) / epsilon_norms
        else:
            nonlin_arg = norms
            if self.bias:
                nonlin_arg = nonlin_arg + self.biases
            scalings = self.scalar_nonlinearity(nonlin_arg)
        return self.scalar_multiplier(scalings, features)


def main():
    torch.manual_seed(0)
    irreps = [(2, 1), (2, 3)]  # 2x0e + 2x1e
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), NormActivation(irreps, torch.sigmoid, bias=True))
    net = net.to(torch.float64)  # stands in for .to('cuda')
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    x = torch.randn(16, 8, dtype=torch.float64)
    for _ in range(3):
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    act = net[1]
    print('loss', loss.item())
    print('epsilon left behind by .to():', act.epsilon.dtype != torch.float64)


if __name__ == '__main__':
    main()
