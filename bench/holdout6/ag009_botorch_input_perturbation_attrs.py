# source: https://github.com/meta-pytorch/botorch/pull/1035
# symptom: perturbation_set follows the model to float64: False
"""BoTorch's `InputPerturbation` input transform (before the PR): the `n_p x d` perturbation set and the optional
bounds are stored as plain tensor attributes in `__init__`, so `model.to(dtype=torch.float64)` (BoTorch runs in
double) moves the surrogate's weights but leaves them behind; the robust objective then mixes dtypes."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class InputTransform(nn.Module):
    transform_on_train = False
    transform_on_eval = True

    def forward(self, X):
        if self.training and not self.transform_on_train:
            return X
        return self.transform(X)


class InputPerturbation(InputTransform):
    def __init__(self, perturbation_set, bounds=None, multiplicative=False):
        super().__init__()
        if perturbation_set.dim() != 2:
            raise ValueError("`perturbation_set` must be an `n_p x d`-dim tensor!")
        self.perturbation_set = perturbation_set  # expect: AG009
        if bounds is not None:
            if bounds.shape[-1] != perturbation_set.shape[-1]:
                raise ValueError("`bounds` must have the same number of columns as the `perturbation_set`!")
            self.bounds = bounds  # expect: AG009
        else:
            self.bounds = None
        self.multiplicative = multiplicative

    def transform(self, X):
        Xe = X.unsqueeze(-2)
        if self.multiplicative:
            p = Xe * self.perturbation_set
        else:
            p = Xe + self.perturbation_set
        p = p.reshape(*X.shape[:-2], -1, X.shape[-1])
        if self.bounds is not None:
            p = torch.maximum(torch.minimum(p, self.bounds[1]), self.bounds[0])
        return p


class SurrogateModel(nn.Module):
    """Stands in for a fitted GP: a small network with an input transform applied in eval mode."""

    def __init__(self, d, input_transform):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, 1))
        self.input_transform = input_transform

    def posterior_mean(self, X):
        return self.net(self.input_transform(X)).squeeze(-1)


def robust_value(model, X, n_p):
    """Mean of the posterior mean over the perturbations of each candidate (expectation risk measure)."""
    means = model.posterior_mean(X)
    return means.view(*X.shape[:-2], X.shape[-2], n_p).mean(-1)


d, n_p = 3, 8
perturbations = 0.05 * torch.randn(n_p, d)
bounds = torch.stack([torch.zeros(d), torch.ones(d)])
model = SurrogateModel(d, InputPerturbation(perturbations, bounds=bounds))
train_X, train_Y = torch.rand(20, d), torch.rand(20)
optimizer = torch.optim.Adam(model.net.parameters(), lr=1e-2)
model.train()
for _ in range(20):
    optimizer.zero_grad()
    loss = ((model.posterior_mean(train_X.unsqueeze(-2)).squeeze(-1) - train_Y) ** 2).mean()
    loss.backward()
    optimizer.step()

model = model.to(dtype=torch.float64)
model.eval()
candidates = torch.rand(5, 1, d, dtype=torch.float64)
with torch.no_grad():
    values = robust_value(model, candidates, n_p)
print("robust values:", [round(v, 4) for v in values.flatten().tolist()])
moved = model.input_transform.perturbation_set.dtype == model.net[0].weight.dtype
print(f"perturbation_set follows the model to float64: {moved}")
