# source: https://github.com/pytorch/tnt/commit/5e3a7120b4e552cc25752926a7dd198dfd759b9b
# symptom: torch\.range is deprecated
"""torchnet meter/apmeter.py before the fix: `APMeter.value` builds the rank vector of the
precision curve with `rg = torch.range(1, self.scores.size(0)).float()` (inclusive end;
deprecated). The meter scores a small multi-label classifier after each epoch.

Stand-ins: `add` concatenates instead of growing storages by hand; the truth mask is
`.bool()` instead of `.byte()` (uint8 masks are refused by recent torch); random data.
"""
import torch
import torch.nn as nn


class APMeter(object):
    """Average precision per class over N x K scores and binary targets."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.scores = torch.FloatTensor()
        self.targets = torch.LongTensor()
        self.weights = torch.FloatTensor()

    def add(self, output, target, weight=None):
        if output.dim() == 1:
            output = output.view(-1, 1)
        if target.dim() == 1:
            target = target.view(-1, 1)
        assert torch.equal(target ** 2, target), 'targets should be binary (0 or 1)'
        if self.scores.numel() > 0:
            assert target.size(1) == self.targets.size(1), \
                'dimensions for output should match previously added examples.'
            self.scores = torch.cat([self.scores, output.float()], 0)
            self.targets = torch.cat([self.targets, target.long()], 0)
        else:
            self.scores = output.float().clone()
            self.targets = target.long().clone()
        if weight is not None:
            self.weights = torch.cat([self.weights, weight.float().squeeze()], 0)

    def value(self):
        if self.scores.numel() == 0:
            return 0
        ap = torch.zeros(self.scores.size(1))
        rg = torch.range(1, self.scores.size(0)).float()  # expect: AG011
        for k in range(self.scores.size(1)):
            scores = self.scores[:, k]
            targets = self.targets[:, k]
            _, sortind = torch.sort(scores, 0, True)
            truth = targets[sortind]
            if self.weights.numel() > 0:
                weight = self.weights[sortind]
                weighted_truth = truth.float() * weight
                rg = weight.cumsum(0)
                tp = weighted_truth.cumsum(0)
            else:
                tp = truth.float().cumsum(0)
            precision = tp.div(rg)
            ap[k] = precision[truth.bool()].sum() / max(truth.sum(), 1)
        return ap


def main():
    torch.manual_seed(0)
    n_classes = 4
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, n_classes))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.BCEWithLogitsLoss()
    x = torch.randn(48, 10)
    y = (torch.randn(48, n_classes) + x[:, :n_classes] > 0).long()
    meter = APMeter()
    for epoch in range(3):
        meter.reset()
        for i in range(0, 48, 16):
            logits = model(x[i:i + 16])
            loss = criterion(logits, y[i:i + 16].float())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            meter.add(torch.sigmoid(logits.detach()), y[i:i + 16])
        print("epoch %d mAP %.4f" % (epoch, meter.value().mean().item()))


if __name__ == "__main__":
    main()
