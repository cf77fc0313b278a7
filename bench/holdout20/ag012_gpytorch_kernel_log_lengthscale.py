# source: https://github.com/cornellius-gp/gpytorch/commit/c06f8c19a82b16e8403a7e695fc3e8f66b23d3a6
# symptom: loss nan
"""gpytorch (2018): exact GP regression with an RBF kernel built on the `Kernel` base class.

`Kernel.__init__` registers `log_lengthscale` as `nn.Parameter(torch.Tensor(1, 1, lengthscale_num_dims))`, an
uninitialised allocation, and the RBF kernel reads it (`self.log_lengthscale.exp()`) in the first forward. The
program runs in deterministic mode, where PyTorch fills uninitialised memory with NaN, so the garbage
lengthscale shows on every run as a NaN marginal log likelihood.
"""
import math

import torch
from torch import nn

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)


class Module(nn.Module):
    def register_parameter(self, name, parameter, bounds=None):
        super().register_parameter(name, parameter)
        if bounds is not None:
            self._bounds = getattr(self, '_bounds', {})
            self._bounds[name] = bounds


class Kernel(Module):
    def __init__(self, has_lengthscale=False, ard_num_dims=None, log_lengthscale_bounds=(-10000, 10000),
                 active_dims=None):
        super().__init__()
        self.active_dims = active_dims
        self.ard_num_dims = ard_num_dims
        if has_lengthscale:
            lengthscale_num_dims = 1 if ard_num_dims is None else ard_num_dims
            self.register_parameter(
                'log_lengthscale',
                torch.nn.Parameter(torch.Tensor(1, 1, lengthscale_num_dims)),  # expect: AG012
                bounds=log_lengthscale_bounds,
            )

    @property
    def lengthscale(self):
        return self.log_lengthscale.exp()


class RBFKernel(Kernel):
    def __init__(self, ard_num_dims=None):
        super().__init__(has_lengthscale=True, ard_num_dims=ard_num_dims)

    def forward(self, x1, x2):
        x1_ = x1.div(self.lengthscale.squeeze(0))
        x2_ = x2.div(self.lengthscale.squeeze(0))
        dist = (x1_.unsqueeze(-2) - x2_.unsqueeze(-3)).pow(2).sum(-1)
        return dist.div(-2).exp()


class ScaleKernel(Module):
    def __init__(self, base_kernel):
        super().__init__()
        self.base_kernel = base_kernel
        self.log_outputscale = nn.Parameter(torch.zeros(1))

    def forward(self, x1, x2):
        return self.log_outputscale.exp() * self.base_kernel(x1, x2)


class ExactGPModel(Module):
    def __init__(self, train_x, train_y):
        super().__init__()
        self.train_x, self.train_y = train_x, train_y
        self.mean_const = nn.Parameter(torch.zeros(1))
        self.covar_module = ScaleKernel(RBFKernel())
        self.log_noise = nn.Parameter(torch.tensor(-2.0))

    def marginal_log_likelihood(self):
        n = self.train_x.size(0)
        K = self.covar_module(self.train_x, self.train_x) + self.log_noise.exp() * torch.eye(n)
        L = torch.linalg.cholesky_ex(K)[0]
        r = (self.train_y - self.mean_const).unsqueeze(-1)
        alpha = torch.cholesky_solve(r, L)
        return (-0.5 * (r * alpha).sum() - L.diagonal().log().sum() - 0.5 * n * math.log(2 * math.pi)) / n


train_x = torch.linspace(0, 1, 40).unsqueeze(-1)
train_y = torch.sin(train_x.squeeze(-1) * (2 * math.pi)) + 0.1 * torch.randn(40)
model = ExactGPModel(train_x, train_y)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for i in range(30):
    optimizer.zero_grad()
    loss = -model.marginal_log_likelihood()
    loss.backward()
    optimizer.step()
    if i % 10 == 0:
        print(f"Iter {i + 1}/30 - loss {loss.item():.3f} lengthscale {model.covar_module.base_kernel.lengthscale.item():.3f}")
print(f"final loss {loss.item():.3f}")
