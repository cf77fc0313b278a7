# source: https://discuss.pytorch.org/t/defining-parameters-by-some-transformation-or-retaining-sub-graphs-but-not-the-whole-graph/50139
# symptom: Trying to backward through the graph a second time
# A Bayesian-ML user defines std = exp(log_std) once, builds dist = Normal(mean, std) before the loop and only samples
# from dist inside it; the exp's graph is freed by the first backward, so the second iteration fails.
# (The report's loop also never zeroes the gradients: a second, real bug, marked AG016.)
import torch
import torch.distributions as dd
import torch.nn as nn

torch.manual_seed(0)
log_std = nn.Parameter(torch.Tensor([1]))  # what we optimise: the log of the scale
std = torch.exp(log_std)  # the transformation applied to it, once
mean = nn.Parameter(torch.Tensor([1]))
dist = dd.Normal(loc=mean, scale=std)  # from here on only `dist` is referred to

optim = torch.optim.SGD([log_std, mean], lr=0.01)
target = dd.Normal(5, 5)

for i in range(50):
    samples = dist.rsample((1000,))  # expect: AG002
    cost = -(target.log_prob(samples) - dist.log_prob(samples)).sum()  # expect: AG002
    cost.backward()
    optim.step()  # expect: AG016
    print(i, log_std.item(), mean.item(), cost.item())
