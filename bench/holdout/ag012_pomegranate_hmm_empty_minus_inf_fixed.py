# source: https://github.com/jmschrei/pomegranate/pull/1121
# symptom: log probability: nan
# Clean twin: the PR's fix, torch.full(..., -inf).
import math

import torch

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True
inf = float("inf")


class DenseHMM:
    def __init__(self, n_distributions=3, starts=(0,), ends=(2,)):
        self.n_distributions = n_distributions
        self.edges = torch.log(torch.full((n_distributions, n_distributions), 1.0 / n_distributions))
        self.starts = torch.full((n_distributions,), -inf)
        self.starts[list(starts)] = math.log(1.0 / len(starts))
        self.ends = torch.full((n_distributions,), -inf)
        self.ends[list(ends)] = 0.0

    def _emission_matrix(self, X):
        means = torch.arange(self.n_distributions, dtype=torch.float32)
        return -0.5 * (X[:, :, None] - means) ** 2

    def forward(self, X):
        emissions = self._emission_matrix(X)
        n, l, _ = emissions.shape
        f = self.starts + emissions[:, 0]
        for i in range(1, l):
            f = torch.logsumexp(f[:, :, None] + self.edges[None], dim=1) + emissions[:, i]
        return torch.logsumexp(f + self.ends, dim=1)


model = DenseHMM()
X = torch.tensor([[0.1, 1.2, 1.9, 2.1]])
print("log probability:", model.forward(X).item())
