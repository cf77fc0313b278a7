# source: https://github.com/by2101/OpenASR/issues/12
# symptom: tot_loss keeps the graph of every iteration: True
"""Fixed twin: the maintainer's answer in the thread ("tot_loss is only there for the log; add .item() after
batch_loss to turn it into a float"): the running total is a Python float, and the per-token loss that is
backpropagated still comes from the metric summarizer.
"""
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)


class MetricSummarizer(object):
    def __init__(self):
        self.metrics = {}  # name: (loss, weight)
        self.metric_names = []
        self.summarized = {}

    def register_metric(self, name, display=False, visual=False, optim=False):
        self.metric_names.append({"name": name, "display": display, "visual": visual, "optim": optim})

    def reset_metrics(self):
        self.metrics = {}
        for item in self.metric_names:
            self.metrics[item["name"]] = None
        self.summarized = {}

    def update_metric(self, name, loss, weight=1.0):
        if name in self.metrics:
            self.metrics[name] = (loss, weight)
        else:
            raise ValueError("The metric {} is not registered.".format(name))

    def summarize(self):
        self.summarized = {}
        for key in self.metrics.keys():
            if self.metrics[key] is None:
                logging.warning("{} is not updated. Skip it.".format(key))
                continue
            item = self.metrics[key]
            self.summarized[key] = item[0] * item[1]

    def collect_loss(self):
        loss = 0
        for item in self.metric_names:
            if item["optim"]:
                v = self.metrics[item["name"]]
                loss += v[0] * v[1]
        return loss

    def fetch_scalers(self, use="display"):
        return [(item["name"], self.summarized[item["name"]]) for item in self.metric_names
                if item[use] and item["name"] in self.summarized]

    def display_msg(self, fetched):
        return " | ".join("{}: {:.7f}".format(name, float(value)) for name, value in fetched)


class FrameModel(nn.Module):
    """Returns the per-token (label-smoothed) cross entropy, zero on padded positions."""

    def __init__(self, feat_dim=20, vocab=12):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feat_dim, 64), nn.ReLU(), nn.Linear(64, vocab))

    def forward(self, feats, labels, paddings, label_smooth=0.0):
        logits = self.net(feats)
        loss = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none", label_smoothing=label_smooth)
        return loss * (1 - paddings)


class Timer(object):
    def tic(self):
        self.start = time.time()

    def toc(self):
        return time.time() - self.start + 1e-6


class Trainer(object):
    def __init__(self, model, config, tr_loader):
        self.model = model
        self.tr_loader = tr_loader
        self.accumulate_grad_batch = config["accumulate_grad_batch"]
        self.grad_max_norm = config["grad_max_norm"]
        self.label_smooth = config["label_smooth"]
        self.print_inteval = config["print_inteval"]
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config["init_lr"])
        self.step = 0
        self.epoch = 0
        self.metric_summarizer = MetricSummarizer()
        self.metric_summarizer.register_metric("per_token_loss", display=True, visual=True, optim=True)
        self.metric_summarizer.register_metric("avg_token_loss", display=True, visual=True, optim=False)
        self.metric_summarizer.register_metric("learning_rate", display=True, visual=True, optim=False)
        self.metric_summarizer.register_metric("sequence_per_sec", display=True, visual=True, optim=False)

    def iter_one_epoch(self):
        niter = 0
        loader = self.tr_loader
        self.model.train()

        timer = Timer()
        timer.tic()
        tot_loss = 0.
        tot_token = 0
        tot_sequence = 0

        n_accu_batch = self.accumulate_grad_batch
        loader_iter = iter(loader)
        tot_iter_num = len(loader)
        while True:
            try:
                data = next(loader_iter)
                niter += 1
            except StopIteration:
                break
            (utts, feats, labels, paddings) = data
            this_loss = self.model(feats, labels, paddings, label_smooth=self.label_smooth)

            batch_loss = torch.sum(this_loss)
            n_token = torch.sum(1 - paddings).float()
            n_sequence = len(utts)

            tot_loss = tot_loss + batch_loss.item()
            tot_token = tot_token + n_token
            tot_sequence = tot_sequence + n_sequence

            self.metric_summarizer.reset_metrics()
            self.metric_summarizer.update_metric("per_token_loss", batch_loss, 1.0 / n_token)
            self.metric_summarizer.update_metric("avg_token_loss", tot_loss, 1.0 / tot_token)
            self.metric_summarizer.update_metric("learning_rate", list(self.optimizer.param_groups)[0]["lr"], 1.0)
            self.metric_summarizer.update_metric("sequence_per_sec", tot_sequence, 1.0 / timer.toc())
            self.metric_summarizer.summarize()

            loss = self.metric_summarizer.collect_loss()
            loss = loss / self.accumulate_grad_batch

            # compute gradients
            if n_accu_batch == self.accumulate_grad_batch:
                self.optimizer.zero_grad()
            loss.backward()
            n_accu_batch -= 1
            if n_accu_batch == 0 or niter == tot_iter_num:
                self.step += 1
                clip_grad_norm_(self.model.parameters(), self.grad_max_norm)
                self.optimizer.step()
                n_accu_batch = self.accumulate_grad_batch
            else:
                continue

            if niter % self.print_inteval == 0:
                todisp = self.metric_summarizer.fetch_scalers(use="display")
                print("Epoch {} | Step {} | Iter {}: {}".format(self.epoch, self.step, niter,
                                                                self.metric_summarizer.display_msg(todisp)))

        self.metric_summarizer.reset_metrics()
        self.last_tot_loss = tot_loss
        return (tot_loss / tot_token).item()


def make_loader(n_batches=16, batch=4, frames=30, feat_dim=20, vocab=12):
    loader = []
    for b in range(n_batches):
        lengths = torch.randint(10, frames + 1, (batch,))
        paddings = (torch.arange(frames)[None, :] >= lengths[:, None]).float()
        utts = ["utt%03d_%d" % (b, i) for i in range(batch)]
        loader.append((utts, torch.randn(batch, frames, feat_dim), torch.randint(0, vocab, (batch, frames)), paddings))
    return loader


if __name__ == "__main__":
    config = {"accumulate_grad_batch": 2, "grad_max_norm": 5.0, "label_smooth": 0.1, "print_inteval": 8,
              "init_lr": 1e-3}
    trainer = Trainer(FrameModel(), config, make_loader())
    for epoch in range(2):
        trainer.epoch = epoch
        avg = trainer.iter_one_epoch()
        print("epoch %d avg token loss %.4f" % (epoch, avg))
    kept = torch.is_tensor(trainer.last_tot_loss) and trainer.last_tot_loss.grad_fn is not None
    print("tot_loss keeps the graph of every iteration: %s" % kept)
