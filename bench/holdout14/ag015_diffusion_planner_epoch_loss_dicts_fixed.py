"""Diffusion-Planner's train_epoch storing each batch's losses as detached Python scalars (clean twin).

`train_epoch` builds `loss = diffusion_loss_func(...)` (a dict of tensors), adds `loss["loss"]`, backpropagates it,
steps, and then `epoch_loss.append(loss)`; `get_epoch_mean_loss(epoch_loss)` averages them after the loop. Every stored
tensor still holds its autograd graph, so the graphs of all batches of the epoch stay alive.

Clean twin: the pull request's fix, each per-batch loss value is converted to a detached Python scalar before it is
appended to `epoch_loss`.
"""
# source: https://github.com/tier4/Diffusion-Planner/pull/372
# symptom: losses keep the graph of every batch: True
import math

import torch
import torch.nn.functional as F
from torch import nn


def heading_to_cos_sin(x):
    return torch.cat([x[..., :2], x[..., 2:3].cos(), x[..., 2:3].sin()], dim=-1)


class TinyPlanner(nn.Module):
    def __init__(self, past_len=4, future_len=6, num_neighbors=3, hidden=32):
        super().__init__()
        self.future_len, self.num_neighbors = future_len, num_neighbors
        self.encoder = nn.Sequential(nn.Linear(past_len * 4 + 4, hidden), nn.ReLU())
        out_dim = (1 + num_neighbors) * future_len * 4
        self.denoiser = nn.Sequential(nn.Linear(hidden + out_dim + 1, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))
        self.turn_head = nn.Linear(hidden, 3)

    def forward(self, inputs, noisy, t):
        h = self.encoder(torch.cat([inputs["ego_agent_past"].flatten(1), inputs["goal_pose"].flatten(1)], dim=-1))
        score = self.denoiser(torch.cat([h, noisy.flatten(1), t[:, None]], dim=-1))
        return score.view_as(noisy), self.turn_head(h)


def diffusion_loss_func(model, inputs, futures, args):
    ego_future, neighbors_future, mask = futures
    gt = torch.cat([ego_future[:, None], neighbors_future], dim=1)
    t = torch.rand(gt.shape[0])
    noise = torch.randn_like(gt)
    std = torch.sqrt(1.0 - torch.exp(-t))[:, None, None, None]
    denoised, turn_logits = model(inputs, gt + std * noise, t)
    neighbor_err = ((denoised[:, 1:] - neighbors_future) ** 2).mean(-1).mean(-1)
    neighbor_loss = neighbor_err[~mask.all(-1)].mean()
    ego_loss = ((denoised[:, 0] - ego_future) ** 2).mean()
    turn_loss = F.cross_entropy(turn_logits, inputs["turn_indicator"])
    accuracy = (turn_logits.argmax(-1) == inputs["turn_indicator"]).float().mean()
    return {"neighbor_prediction_loss": neighbor_loss, "ego_planning_loss": ego_loss,
            "turn_indicator_loss": turn_loss, "turn_indicator_accuracy": accuracy}


def get_epoch_mean_loss(epoch_loss):
    return {key: sum(item[key] for item in epoch_loss) / len(epoch_loss) for key in epoch_loss[0]}


class Args:
    alpha_planning_loss = 1.0


def train_epoch(data_loader, model, optimizer, args):
    epoch_loss = []
    model.train()
    for inputs in data_loader:
        inputs = dict(inputs)
        inputs["ego_agent_past"] = heading_to_cos_sin(inputs["ego_agent_past"])
        inputs["goal_pose"] = heading_to_cos_sin(inputs["goal_pose"])
        ego_future = heading_to_cos_sin(inputs["ego_agent_future"])
        neighbors_future = inputs["neighbor_agents_future"]
        mask = torch.sum(torch.ne(neighbors_future[..., :3], 0), dim=-1) == 0
        neighbors_future = heading_to_cos_sin(neighbors_future)
        neighbors_future[mask] = 0.0

        optimizer.zero_grad()
        loss = diffusion_loss_func(model, inputs, (ego_future, neighbors_future, mask), args)
        loss["loss"] = (loss["neighbor_prediction_loss"] + args.alpha_planning_loss * loss["ego_planning_loss"]
                        + loss["turn_indicator_loss"])
        loss["loss"].backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5)
        optimizer.step()
        epoch_loss.append({key: value.detach().item() for key, value in loss.items()})

    keeps_graph = any(torch.is_tensor(v) and v.grad_fn is not None for item in epoch_loss for v in item.values())
    print(f"losses keep the graph of every batch: {keeps_graph}")
    epoch_mean_loss = get_epoch_mean_loss(epoch_loss)
    print(f"epoch_mean_loss['loss']={float(epoch_mean_loss['loss']):.4f}")
    return epoch_mean_loss, epoch_mean_loss["loss"]


def make_batches(n_batches=4, batch=8, past_len=4, future_len=6, num_neighbors=3):
    for _ in range(n_batches):
        neighbors = torch.randn(batch, num_neighbors, future_len, 3)
        neighbors[:, -1] = 0.0
        yield {
            "ego_agent_past": torch.randn(batch, past_len, 3),
            "goal_pose": torch.randn(batch, 1, 3),
            "ego_agent_future": torch.randn(batch, future_len, 3) * math.pi / 4,
            "neighbor_agents_future": neighbors,
            "turn_indicator": torch.randint(0, 3, (batch,)),
        }


def main():
    torch.manual_seed(0)
    model = TinyPlanner()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(2):
        train_epoch(list(make_batches()), model, optimizer, Args())


if __name__ == "__main__":
    main()
