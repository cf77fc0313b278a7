# source: holdout13 short program (no report)
# symptom: grads match reference: False
"""Quantisation experiment: snap the weights of a small classifier to a 4-bit grid during training, in a
LightningModule-like class (`training_step`, `fit`).

Clean twin: the weights are snapped with `torch.no_grad()` + in-place copy, after `opt.step()` instead of between the forward and backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def fake_quant(w, bits=4):
    scale = w.abs().max() / (2 ** (bits - 1) - 1)
    return torch.round(w / scale) * scale


class LitQAT:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def snap_weights(self):
        for m in self.model:
            if isinstance(m, nn.Linear):
                with torch.no_grad():
                    m.weight.copy_(fake_quant(m.weight))

    def training_step(self, batch):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        return loss

    def fit(self, batches):
        x, y = batches[0]
        ref = torch.autograd.grad(F.cross_entropy(self.model(x), y), list(self.model.parameters()))
        for i, batch in enumerate(batches):
            self.opt.zero_grad()
            loss = self.training_step(batch)
            if i == 0:
                match = all(torch.allclose(p.grad, r) for p, r in zip(self.model.parameters(), ref))
            self.opt.step()
            self.snap_weights()
        print(f"last loss {loss.item():.4f}")
        print(f"grads match reference: {match}")


torch.manual_seed(0)
x, y = torch.randn(160, 12), torch.randint(0, 3, (160,))
LitQAT().fit(list(zip(x.split(32), y.split(32))))
