# source: written for holdout25 (pattern: adversarial domain adaptation trains the domain critic on encoder features, steps it, then reuses the same undetached features for the encoder's confusion loss)
# symptom: backward through the graph a second time|modified by an inplace operation
"""Adversarial domain adaptation (ADDA-like) between two shifted Gaussian domains."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DomainAdapter:
    def __init__(self, d_in=10, d_feat=16):
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, d_feat))
        self.classifier = nn.Linear(d_feat, 2)
        self.domain_critic = nn.Sequential(nn.Linear(d_feat, 32), nn.ReLU(), nn.Linear(32, 1))
        self.opt_task = torch.optim.Adam(
            list(self.encoder.parameters()) + list(self.classifier.parameters()), lr=1e-3)
        self.opt_critic = torch.optim.Adam(self.domain_critic.parameters(), lr=1e-3)

    def step(self, xs, ys, xt, lam=0.1):
        fs, ft = self.encoder(xs), self.encoder(xt)
        feats = torch.cat([fs, ft])
        domains = torch.cat([torch.zeros(len(fs), 1), torch.ones(len(ft), 1)])

        critic_loss = F.binary_cross_entropy_with_logits(self.domain_critic(feats), domains)
        self.opt_critic.zero_grad()
        critic_loss.backward()
        self.opt_critic.step()

        task_loss = F.cross_entropy(self.classifier(fs), ys)
        confusion = F.binary_cross_entropy_with_logits(self.domain_critic(feats), 1 - domains)
        self.opt_task.zero_grad()
        (task_loss + lam * confusion).backward()  # expect: AG017
        self.opt_task.step()
        return task_loss.item(), critic_loss.item()


def domains(n=64):
    xs = torch.randn(n, 10)
    ys = (xs[:, 0] > 0).long()
    xt = torch.randn(n, 10) + 1.5
    return xs, ys, xt


if __name__ == "__main__":
    torch.manual_seed(0)
    adapter = DomainAdapter()
    for it in range(40):
        task, critic = adapter.step(*domains())
        if it % 10 == 0:
            print(f"iter {it}: task {task:.3f} critic {critic:.3f}")
