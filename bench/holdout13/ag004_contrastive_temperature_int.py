# source: holdout13 short program (no report)
# symptom: [Oo]nly Tensors of floating point
"""SimCLR-style contrastive learning with a learnable inverse temperature, in a plain trainer class whose encoder,
optimizer and temperature live on `self`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ContrastiveTrainer:
    def __init__(self, dim_in=32, dim_out=16, lr=1e-3):
        self.encoder = nn.Sequential(nn.Linear(dim_in, 64), nn.ReLU(), nn.Linear(64, dim_out))
        self.log_inv_temp = torch.tensor(2, requires_grad=True)  # expect: AG004
        self.opt = torch.optim.Adam([*self.encoder.parameters(), self.log_inv_temp], lr=lr)

    def augment(self, x):
        return x + 0.1 * torch.randn_like(x)

    def info_nce(self, z1, z2):
        z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
        logits = z1 @ z2.t() * self.log_inv_temp.exp()
        return F.cross_entropy(logits, torch.arange(z1.shape[0]))

    def fit(self, data, epochs=3, batch_size=32):
        for epoch in range(epochs):
            for xb in data.split(batch_size):
                self.opt.zero_grad()
                loss = self.info_nce(self.encoder(self.augment(xb)), self.encoder(self.augment(xb)))
                loss.backward()
                self.opt.step()
            print(f"epoch {epoch} loss {loss.item():.4f} temperature {math.exp(-self.log_inv_temp.item()):.3f}")


torch.manual_seed(0)
ContrastiveTrainer().fit(torch.randn(256, 32))
