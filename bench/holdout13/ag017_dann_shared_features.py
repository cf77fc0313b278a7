# source: holdout13 short program (no report)
# symptom: backward through the graph a second time|modified by an inplace operation
"""Domain-adversarial training in a trainer class: a domain discriminator learns to tell source from target
features, then encoder + classifier learn the task while confusing it (two optimizers, one `training_step`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DANNTrainer:
    def __init__(self):
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.classifier = nn.Linear(16, 3)
        self.domain_disc = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
        self.opt_model = torch.optim.Adam([*self.encoder.parameters(), *self.classifier.parameters()], lr=1e-3)
        self.opt_disc = torch.optim.Adam(self.domain_disc.parameters(), lr=1e-3)

    def training_step(self, xs, ys, xt):
        feats = torch.cat([self.encoder(xs), self.encoder(xt)])
        domains = torch.cat([torch.ones(len(xs), 1), torch.zeros(len(xt), 1)])
        d_loss = F.binary_cross_entropy_with_logits(self.domain_disc(feats), domains)
        self.opt_disc.zero_grad()
        d_loss.backward()
        self.opt_disc.step()

        confusion = F.binary_cross_entropy_with_logits(self.domain_disc(feats), 1 - domains)
        loss = F.cross_entropy(self.classifier(feats[:len(xs)]), ys) + 0.1 * confusion
        self.opt_model.zero_grad()
        loss.backward()  # expect: AG017
        self.opt_model.step()
        return d_loss.item(), loss.item()


torch.manual_seed(0)
xs, ys = torch.randn(128, 16), torch.randint(0, 3, (128,))
xt = torch.randn(128, 16) * 1.2 + 0.3
trainer = DANNTrainer()
for epoch in range(3):
    for (bs, by), bt in zip(zip(xs.split(32), ys.split(32)), xt.split(32)):
        d, m = trainer.training_step(bs, by, bt)
    print(f"epoch {epoch} disc {d:.4f} model {m:.4f}")
