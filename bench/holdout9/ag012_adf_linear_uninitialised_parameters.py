# source: https://github.com/mattiasegu/uncertainty_estimation_deep_learning/pull/7
# symptom: loss nan
"""Assumed-density-filtering (ADF) layers of `contrib/adf.py`: every layer propagates a mean and a variance. The
ADF `Linear` creates `Parameter(torch.Tensor(out_features, in_features))` and `Parameter(torch.Tensor(out_features))`
but, unlike `torch.nn.Linear` that it copies, has no `reset_parameters()`: the weights are whatever the allocator
returned ("mostly zeroes for me", says the pull request).

To make that read visible on demand the program runs in PyTorch's deterministic mode, in which uninitialised memory
is filled with NaN (`torch.utils.deterministic.fill_uninitialized_memory`): the first loss is nan.
"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.nn.parameter import Parameter

torch.use_deterministic_algorithms(True)  # debugging aid: uninitialised memory reads come out as NaN
torch.manual_seed(0)


def keep_variance(x, min_variance=1e-3):
    return x + min_variance


def normcdf(value, mu=0.0, stddev=1.0):
    sinv = (1.0 / stddev) if isinstance(stddev, float) else stddev.reciprocal()
    return 0.5 * (1.0 + torch.erf((value - mu) * sinv / math.sqrt(2.0)))


def normpdf(value, mu=0.0, stddev=1.0):
    return torch.exp(-(value - mu) ** 2 / (2.0 * stddev ** 2)) / math.sqrt(2.0 * math.pi) / stddev


class ReLU(nn.Module):
    def __init__(self, keep_variance_fn=None):
        super(ReLU, self).__init__()
        self._keep_variance_fn = keep_variance_fn

    def forward(self, features_mean, features_variance):
        features_stddev = torch.sqrt(features_variance)
        div = features_mean / features_stddev
        pdf = normpdf(div)
        cdf = normcdf(div)
        outputs_mean = features_mean * cdf + features_stddev * pdf
        outputs_variance = (features_mean ** 2 + features_variance) * cdf \
            + features_mean * features_stddev * pdf - outputs_mean ** 2
        if self._keep_variance_fn is not None:
            outputs_variance = self._keep_variance_fn(outputs_variance)
        return outputs_mean, outputs_variance


class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True, keep_variance_fn=None):
        super(Linear, self).__init__()
        self._keep_variance_fn = keep_variance_fn
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.Tensor(out_features, in_features))  # expect: AG012
        if bias:
            self.bias = Parameter(torch.Tensor(out_features))  # expect: AG012
        else:
            self.register_parameter('bias', None)

    def forward(self, inputs_mean, inputs_variance):
        outputs_mean = F.linear(inputs_mean, self.weight, self.bias)
        outputs_variance = F.linear(inputs_variance, self.weight ** 2, None)
        if self._keep_variance_fn is not None:
            outputs_variance = self._keep_variance_fn(outputs_variance)
        return outputs_mean, outputs_variance


class Sequential(nn.Sequential):
    def forward(self, inputs, inputs_variance):
        for module in self._modules.values():
            inputs, inputs_variance = module(inputs, inputs_variance)
        return inputs, inputs_variance


class ADFClassifier(nn.Module):
    """A small MLP head in its ADF version, as in the repository's ResNet ADF models."""

    def __init__(self, in_features=10, hidden=32, num_classes=3, noise_variance=1e-3):
        super().__init__()
        self.noise_variance = noise_variance
        kv = lambda x: keep_variance(x, min_variance=1e-3)
        self.net = Sequential(Linear(in_features, hidden, keep_variance_fn=kv), ReLU(keep_variance_fn=kv),
                              Linear(hidden, num_classes, keep_variance_fn=kv))

    def forward(self, x):
        inputs_mean = x
        inputs_variance = torch.zeros_like(inputs_mean) + self.noise_variance
        return self.net(inputs_mean, inputs_variance)


if __name__ == "__main__":
    x = torch.randn(64, 10)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 1).long()
    model = ADFClassifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(5):
        outputs_mean, outputs_variance = model(x)
        loss = F.cross_entropy(outputs_mean, y) + 0.01 * outputs_variance.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("epoch %d loss %.4f" % (epoch, loss.item()))
