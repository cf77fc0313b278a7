# source: https://github.com/microsoft/SpareNet/issues/12
# symptom: logged loss sum still has a graph: True
# sparenetRunner.train_step feeds the loss tensors themselves (coarse_loss * 1000, refine_loss * 1000) to an
# AverageMeter kept on self for logging, so every iteration's graph stays reachable and GPU memory grows until OOM.
import torch
import torch.nn as nn

from sparenet_lib.base_runner import BaseRunner
from sparenet_lib.misc import AverageMeter

torch.manual_seed(0)


def graph_size(t):
    seen, stack = set(), [getattr(t, "grad_fn", None)]
    while stack:
        f = stack.pop()
        if f is not None and f not in seen:
            seen.add(f)
            stack.extend(g for g, _ in f.next_functions)
    return len(seen)


def chamfer_dist_mean(a, b):
    d = torch.cdist(a, b)
    return (d.min(dim=2).values.mean() + d.min(dim=1).values.mean()) / 2


class SpareNet(nn.Module):
    def __init__(self, n_points=16):
        super().__init__()
        self.n_points = n_points
        self.encoder = nn.Linear(3, 16)
        self.coarse = nn.Linear(16, n_points * 3)
        self.refine = nn.Linear(n_points * 3, n_points * 3)

    def forward(self, data):
        g = torch.relu(self.encoder(data["partial_cloud"])).max(dim=1).values
        coarse = self.coarse(g)
        refine = coarse + self.refine(coarse)
        shape = (-1, self.n_points, 3)
        return coarse.view(shape), refine.view(shape), refine.view(shape), refine.abs().mean()


class sparenetRunner(BaseRunner):
    def __init__(self, config, logger):
        super().__init__(config, logger)
        self.losses = AverageMeter(["CoarseLoss", "RefineLoss"])
        self.chamfer_dist_mean = None

    def build_train_loss(self):
        self.chamfer_dist_mean = chamfer_dist_mean

    def train_step(self, items):
        _, (_, _, _, data) = items
        _loss, _, _, _, refine_loss, coarse_loss = self.completion(data)
        self.models.zero_grad()
        _loss.backward()
        self.optimizers.step()

        self.loss["coarse_loss"] = coarse_loss * 1000
        self.loss["refine_loss"] = refine_loss * 1000
        self.loss["rec_loss"] = _loss
        self.losses.update([coarse_loss * 1000, refine_loss * 1000])  # expect: AG015

    def completion(self, data):
        coarse_ptcloud, middle_ptcloud, refine_ptcloud, expansion_penalty = self.models(data)
        coarse_loss = self.chamfer_dist_mean(coarse_ptcloud, data["gtcloud"])
        middle_loss = self.chamfer_dist_mean(middle_ptcloud, data["gtcloud"])
        refine_loss = self.chamfer_dist_mean(refine_ptcloud, data["gtcloud"])
        _loss = coarse_loss + middle_loss + refine_loss + expansion_penalty.mean() * 0.1
        return _loss, refine_ptcloud, middle_ptcloud, coarse_ptcloud, refine_loss, coarse_loss


loader = [{"partial_cloud": torch.rand(2, 8, 3), "gtcloud": torch.rand(2, 16, 3)} for _ in range(5)]
runner = sparenetRunner({"model_fn": SpareNet}, logger=None)
runner.train(loader)
summed = runner.losses._sum[0]
print("logged loss sum still has a graph:", summed.grad_fn is not None, "| autograd nodes reachable:", graph_size(summed))
