"""stylegan2_pytorch Trainer: the logged G/D losses are summed as tensors that keep their graphs.

`Trainer._backward` scales the loss, calls `backward()` and returns `loss * world_size`, a tensor still attached to
the graph; `Trainer.train` sums these over the subdivisions of every G and D step (`G_loss += self._backward(...)`,
`D_loss += self._backward(...)`, and a second `D_loss += loss`), only to hand them to the progress logger. Every
subdivision's graph stays reachable from the running sums until the next step.

Clean twin: `_backward` returns `loss.item() * (self.world_size or 1)` and the extra sum is `D_loss += loss.item()`,
as the pull request does, so the running sums are plain floats.
"""
# source: https://github.com/adriansahlman/stylegan2_pytorch/pull/11
# symptom: D_loss keeps the graph of every subdivision: True
import torch
import torch.nn.functional as F
from torch import nn


def lerp(a, b, beta):
    return a + beta * (b - a)


class ValueTracker:
    def __init__(self, beta=0.95):
        self.beta = beta
        self.values = {}

    def add(self, name, value, beta=None):
        if torch.is_tensor(value):
            value = value.item()
        beta = self.beta if beta is None else beta
        self.values[name] = value if name not in self.values else lerp(value, self.values[name], beta)

    def __str__(self):
        return ", ".join(f"{k}: {v:.4g}" for k, v in sorted(self.values.items()))


def G_logistic_ns(G, D, latents):
    fakes = G(latents)
    return F.softplus(-D(fakes)).mean()


def D_logistic(G, D, latents, reals):
    with torch.no_grad():
        fakes = G(latents)
    return (F.softplus(D(fakes)) + F.softplus(-D(reals))).mean()


class Trainer:
    def __init__(self, G, D, data, latent_size=8, batch_size=16, device_batch_size=8, world_size=None):
        self.G, self.D, self.data = G, D, data
        self.latent_size = latent_size
        self.device_batch_size = device_batch_size
        self.subdivisions = batch_size // device_batch_size
        self.world_size = world_size
        self.G_opt = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99))
        self.D_opt = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.99))
        self.G_iter = self.D_iter = 1
        self.seen = 0
        self.loss_keeps_graph = False

    def prior_generator(self):
        return torch.randn(self.device_batch_size, self.latent_size)

    def _get_batch(self):
        return self.data[torch.randint(0, len(self.data), (self.device_batch_size,))]

    def _backward(self, loss, opt, mul=1, subdivisions=None):
        if loss is None:
            return 0
        mul /= subdivisions or self.subdivisions
        mul /= self.world_size or 1
        if mul != 1:
            loss *= mul
        loss.backward()
        return loss.item() * (self.world_size or 1)

    def train(self, iterations):
        value_tracker = ValueTracker()
        for _ in range(iterations):
            self.D.requires_grad_(False)
            for _ in range(self.G_iter):
                self.G_opt.zero_grad()
                G_loss = 0
                for i in range(self.subdivisions):
                    loss = G_logistic_ns(self.G, self.D, self.prior_generator())
                    G_loss += self._backward(loss, self.G_opt)
                self.G_opt.step()
            self.D.requires_grad_(True)

            self.G.requires_grad_(False)
            for _ in range(self.D_iter):
                self.D_opt.zero_grad()
                D_loss = 0
                for i in range(self.subdivisions):
                    loss = D_logistic(self.G, self.D, self.prior_generator(), self._get_batch())
                    D_loss += self._backward(loss, self.D_opt)
                    D_loss += loss.item()
                self.D_opt.step()
            self.G.requires_grad_(True)

            if torch.is_tensor(D_loss) and D_loss.grad_fn is not None:
                self.loss_keeps_graph = True
            value_tracker.add("G_loss", G_loss)
            value_tracker.add("D_loss", D_loss)
            self.seen += 1
            if self.seen % 5 == 0:
                print(f"iter {self.seen}: {value_tracker}")


def main():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 4))
    D = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    data = torch.randn(256, 4) * 0.5 + torch.tensor([1.0, -1.0, 0.5, 0.0])
    trainer = Trainer(G, D, data)
    trainer.train(10)
    print(f"D_loss keeps the graph of every subdivision: {trainer.loss_keeps_graph}")


if __name__ == "__main__":
    main()
