# source: written for holdout28 (pattern: tied-weight autoencoder trainer builds the decoder weight from the encoder weight and a learnable scale once in __init__ and reuses it in every train_step)
# symptom: backward through the graph a second time
"""Tied-weight autoencoder for 20-d data that lies near a 4-d subspace.

The decoder reuses the transposed encoder weight, multiplied by a learnable
per-feature output scale.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n=600, d=20, k=4):
    basis = torch.randn(k, d)
    codes = torch.randn(n, k)
    return codes @ basis + 0.05 * torch.randn(n, d)


class TiedAETrainer:
    def __init__(self, d_in=20, d_code=4, lr=5e-3):
        self.encoder = nn.Linear(d_in, d_code)
        self.out_scale = nn.Parameter(torch.ones(d_in, 1))
        self.dec_bias = nn.Parameter(torch.zeros(d_in))
        self.dec_weight = self.encoder.weight.t() * self.out_scale  # expect: AG002
        params = list(self.encoder.parameters()) + [self.out_scale, self.dec_bias]
        self.optimizer = torch.optim.Adam(params, lr=lr)

    def reconstruct(self, x):
        code = torch.tanh(self.encoder(x))
        return F.linear(code, self.dec_weight, self.dec_bias)

    def train_step(self, x):
        loss = F.mse_loss(self.reconstruct(x), x)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, data, epochs=3, batch_size=50):
        for epoch in range(epochs):
            perm = torch.randperm(len(data))
            losses = [self.train_step(data[perm[i:i + batch_size]])
                      for i in range(0, len(data), batch_size)]
            print(f"epoch {epoch} recon {sum(losses) / len(losses):.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    data = make_data()
    trainer = TiedAETrainer()
    trainer.fit(data)
