"""miniai Learner: the TrainCB callback steps the optimizer but never zeroes the gradients.

In the course22p2 `07_learner` notebook, the `Learner` hands each part of a batch to its callbacks
(`predict`, `get_loss`, `backward`, `step`). `TrainCB.step` was `self.learn.opt.step()` alone, and nothing
else in the loop called `zero_grad()`, so every batch's backward added onto the gradients of all the batches
before it and each SGD step applied their running sum.

Clean twin: `TrainCB.step` zeroes the gradients right after the optimizer step, as the pull request's commit does.
"""
# source: https://github.com/fastai/course22p2/pull/2
# symptom: gradients carried over from the previous step: True
from functools import partial
from operator import attrgetter

import torch
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset


class DataLoaders:
    def __init__(self, *dls):
        self.train, self.valid = dls[:2]


def identity(*args):
    if not args:
        return
    x, *args = args
    return (x,) + tuple(args) if args else x


class CancelFitException(Exception):
    pass


class CancelBatchException(Exception):
    pass


class CancelEpochException(Exception):
    pass


class with_cbs:
    def __init__(self, nm):
        self.nm = nm

    def __call__(self, f):
        def _f(o, *args, **kwargs):
            try:
                o.callback(f"before_{self.nm}")
                f(o, *args, **kwargs)
                o.callback(f"after_{self.nm}")
            except globals()[f"Cancel{self.nm.title()}Exception"]:
                pass
        return _f


class Learner:
    def __init__(self, model, dls, loss_func, lr, cbs, opt_func=optim.SGD):
        self.model, self.dls, self.loss_func, self.lr, self.cbs, self.opt_func = model, dls, loss_func, lr, cbs, opt_func
        for cb in cbs:
            cb.learn = self

    @with_cbs("batch")
    def one_batch(self):
        self.predict()
        self.get_loss()
        if self.model.training:
            self.backward()
            self.step()

    def one_epoch(self, train):
        self.model.train(train)
        self.dl = self.dls.train if train else self.dls.valid
        self._one_epoch()

    @with_cbs("epoch")
    def _one_epoch(self):
        for self.iter, self.batch in enumerate(self.dl):
            self.one_batch()

    def fit(self, n_epochs):
        self.n_epochs = n_epochs
        self.epochs = range(n_epochs)
        self.opt = self.opt_func(self.model.parameters(), self.lr)
        self._fit()

    @with_cbs("fit")
    def _fit(self):
        for self.epoch in self.epochs:
            self.one_epoch(True)
            self.one_epoch(False)

    def __getattr__(self, name):
        if name[0] == "_":
            raise AttributeError(name)
        return partial(self.callback, name)

    def callback(self, method_nm):
        for cb in sorted(self.cbs, key=attrgetter("order")):
            getattr(cb, method_nm, identity)()


class Callback:
    order = 0


class TrainCB(Callback):
    def predict(self):
        self.learn.preds = self.learn.model(self.learn.batch[0])

    def get_loss(self):
        self.learn.loss = self.learn.loss_func(self.learn.preds, self.learn.batch[1])

    def backward(self):
        self.learn.loss.backward()

    def step(self):
        self.learn.opt.step()
        self.learn.opt.zero_grad()


class MetricsCB(Callback):
    def before_epoch(self):
        self.total, self.correct, self.loss_sum = 0, 0, 0.0

    def after_batch(self):
        n = len(self.learn.batch[0])
        self.total += n
        self.correct += (self.learn.preds.argmax(dim=1) == self.learn.batch[1]).sum().item()
        self.loss_sum += self.learn.loss.item() * n

    def after_epoch(self):
        print(self.learn.epoch, self.learn.model.training, round(self.correct / self.total, 4), round(self.loss_sum / self.total, 4))


class GradCheckCB(Callback):
    order = -1
    carried_over = False

    def before_batch(self):
        if self.learn.model.training and any(p.grad is not None and p.grad.abs().sum() > 0 for p in self.learn.model.parameters()):
            GradCheckCB.carried_over = True


def main():
    torch.manual_seed(0)
    x = torch.randn(512, 20)
    y = (x[:, :5].sum(1) > 0).long() + (x[:, 5:10].sum(1) > 1).long()
    dls = DataLoaders(DataLoader(TensorDataset(x[:400], y[:400]), batch_size=50, shuffle=True),
                      DataLoader(TensorDataset(x[400:], y[400:]), batch_size=100))
    model = nn.Sequential(nn.Linear(20, 50), nn.ReLU(), nn.Linear(50, 3))
    learn = Learner(model, dls, nn.functional.cross_entropy, lr=0.2, cbs=[TrainCB(), MetricsCB(), GradCheckCB()])
    learn.fit(2)
    print(f"gradients carried over from the previous step: {GradCheckCB.carried_over}")


if __name__ == "__main__":
    main()
