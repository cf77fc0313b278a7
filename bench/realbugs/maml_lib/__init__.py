"""A minimal stand-in for learn2learn's MAML wrapper: clone() gives a differentiable copy, adapt() one inner step."""
import copy

import torch
import torch.nn as nn


def clone_module(module):
    clone = copy.deepcopy(module)
    for (name, param), (_, cloned) in zip(module.named_modules(), clone.named_modules()):
        for key, p in param._parameters.items():
            if p is not None:
                cloned._parameters[key] = p.clone()  # a non-leaf that keeps the graph to the meta-parameters
    return clone


def update_module(module, lr, grads):
    params = [(m, k) for m in module.modules() for k, p in m._parameters.items() if p is not None]
    for (m, k), g in zip(params, grads):
        if g is not None:
            m._parameters[k] = m._parameters[k] - lr * g


class MAML(nn.Module):
    def __init__(self, model, lr):
        super().__init__()
        self.module = model
        self.lr = lr

    def forward(self, *args):
        return self.module(*args)

    def clone(self):
        return MAML(clone_module(self.module), lr=self.lr)

    def adapt(self, loss):
        params = [p for m in self.module.modules() for p in m._parameters.values() if p is not None]
        grads = torch.autograd.grad(loss, params, create_graph=True, allow_unused=True)
        update_module(self.module, self.lr, grads)
