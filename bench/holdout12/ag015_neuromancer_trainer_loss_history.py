# source: https://github.com/pnnl/neuromancer/pull/292
# symptom: loss history keeps autograd graphs: True
"""neuromancer `Trainer.train()`: each epoch stores `mean_loss` (the mean of the batch losses, stacked
with their graphs) in `self.loss_history["train"]` and the dev mean in `self.loss_history["dev"]`; the
dev pass runs under `torch.set_grad_enabled(self.model.grad_inference)`, which is True for problems that
differentiate in the forward (PINNs), so the dev graphs are kept whole. Neither is detached, so every
epoch's autograd graph stays alive for the whole run ("hundreds of MB or a few GB"). The batch list
`losses` is rebuilt every epoch and is not what leaks. The program prints whether the stored history
still holds graphs."""
from copy import deepcopy

import torch
import torch.nn as nn

torch.manual_seed(0)


class Problem(nn.Module):
    """Stand-in for a neuromancer Problem: a node map plus a PDE-style residual loss."""

    def __init__(self, grad_inference=True):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
        self.grad_inference = grad_inference

    def forward(self, batch):
        x = batch["x"].clone().requires_grad_(True)
        u = self.net(x)
        du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
        residual = du - torch.cos(x)
        name = batch["name"]
        return {f"{name}_loss": (residual ** 2).mean() + (self.net(torch.zeros(1, 1)) ** 2).mean()}


class Trainer:
    def __init__(self, problem, train_data, dev_data, epochs=5, train_metric="train_loss",
                 dev_metric="dev_loss", eval_metric="dev_loss", clip=100.0):
        self.model = problem
        self.optimizer = torch.optim.Adam(problem.parameters(), 0.01, betas=(0.0, 0.9))
        self.train_data = train_data
        self.dev_data = dev_data
        self.epochs = epochs
        self.train_metric = train_metric
        self.dev_metric = dev_metric
        self.eval_metric = eval_metric
        self.clip = clip
        self.best_devloss = float("inf")
        self.best_model = deepcopy(self.model.state_dict())
        self.loss_history = {"train": [], "dev": []}

    def train(self):
        for i in range(self.epochs):
            self.model.train()
            losses = []
            for t_batch in self.train_data:
                output = self.model(t_batch)
                self.optimizer.zero_grad()
                output[self.train_metric].backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                self.optimizer.step()
                losses.append(output[self.train_metric])
            output[f"mean_{self.train_metric}"] = torch.mean(torch.stack(losses))

            with torch.set_grad_enabled(self.model.grad_inference):
                self.model.eval()
                losses = []
                for d_batch in self.dev_data:
                    eval_output = self.model(d_batch)
                    losses.append(eval_output[self.dev_metric])
                mean_dev_loss = torch.mean(torch.stack(losses))
                self.loss_history["dev"].append(mean_dev_loss)  # expect: AG015
                eval_output[f"mean_{self.dev_metric}"] = mean_dev_loss
                output = {**output, **eval_output}
                if output[self.eval_metric] < self.best_devloss:
                    self.best_model = deepcopy(self.model.state_dict())
                    self.best_devloss = float(output[self.eval_metric])
                mean_loss = output[f"mean_{self.train_metric}"]
                self.loss_history["train"].append(mean_loss)  # expect: AG015
                print(f"epoch: {i}  {self.train_metric}: {float(mean_loss):.5f}")
        self.model.load_state_dict(self.best_model)
        return self.best_model


def main():
    train_data = [{"x": torch.rand(32, 1) * 3, "name": "train"} for _ in range(4)]
    dev_data = [{"x": torch.rand(32, 1) * 3, "name": "dev"} for _ in range(2)]
    trainer = Trainer(Problem(grad_inference=True), train_data, dev_data, epochs=5)
    trainer.train()
    history = trainer.loss_history["train"] + trainer.loss_history["dev"]
    kept = any(torch.is_tensor(v) and v.grad_fn is not None for v in history)
    print(f"loss history keeps autograd graphs: {kept}")


if __name__ == "__main__":
    main()
