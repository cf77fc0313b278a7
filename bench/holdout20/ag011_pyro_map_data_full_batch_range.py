# source: https://github.com/pyro-ppl/pyro/commit/c18cddd268ca7d22e43d77adc704266e0616a7f9
# symptom: range\(\) missing 1 required positional argument
"""pyro (2017) `map_data`: the data-subsampling helper of a model, fitted here by maximum likelihood on coin
flips with the full batch (`batch_size=0`).

With `batch_size == 0` (no subsampling) `map_data` builds the indices of the whole data set with
`torch.range(data.size(0))`, the deprecated end-inclusive range that needs both start and end: on torch 2.13 it
raises at the first model evaluation (and with a start it would return one index too many).
"""
import torch
from torch import nn

torch.manual_seed(0)


def map_data(name, data, fn, batch_size=None):
    """Apply `fn(ind, ind_data)` to (a subsample of) `data`; returns fn's result and the likelihood scale."""
    if isinstance(data, torch.Tensor):
        if batch_size is None:
            batch_size = 0
        if batch_size == 0:
            # if batch_size == 0, don't index (saves time/space)
            scale = 1.0
            ind = torch.range(data.size(0))  # expect: AG011
            ind_data = data
        else:
            # if batch_size > 0, select a random set of indices and store it
            ind = torch.randperm(data.size(0))[:batch_size]
            ind_data = data.index_select(0, ind)
            scale = float(data.size(0)) / float(batch_size)
        return fn(ind, ind_data), scale
    return [fn(i, x) for i, x in enumerate(data)], 1.0


class CoinModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.logit_fairness = nn.Parameter(torch.zeros(1))

    def log_likelihood(self, data, batch_size=0):
        def observe(ind, flips):
            p = torch.sigmoid(self.logit_fairness)
            return (flips * torch.log(p) + (1 - flips) * torch.log(1 - p)).sum() / max(len(ind), 1)
        ll, scale = map_data("data", data, observe, batch_size=batch_size)
        return ll * scale


data = (torch.rand(100) < 0.7).float()
model = CoinModel()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(200):
    optimizer.zero_grad()
    loss = -model.log_likelihood(data, batch_size=0)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(f"step {step} loss {loss.item():.4f} fairness {torch.sigmoid(model.logit_fairness).item():.3f}")
print(f"estimated fairness {torch.sigmoid(model.logit_fairness).item():.3f}")
