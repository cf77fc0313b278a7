# source: written for holdout28 (pattern: Bernoulli VAE's __init__ copies the logit of the mean pixel into the decoder's output bias parameter outside no_grad)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Small Bernoulli VAE on random binary "images" (8x8).

Initialising the decoder's output bias to the logit of the mean pixel value is a
common trick to speed up the start of training.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BernoulliVAE(nn.Module):
    def __init__(self, pixel_mean, d_in=64, d_hidden=128, d_latent=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU())
        self.mu = nn.Linear(d_hidden, d_latent)
        self.logvar = nn.Linear(d_hidden, d_latent)
        self.dec = nn.Sequential(nn.Linear(d_latent, d_hidden), nn.ReLU())
        self.dec_out = nn.Linear(d_hidden, d_in)
        prior_logit = torch.logit(pixel_mean.clamp(1e-3, 1 - 1e-3))
        self.dec_out.bias.copy_(prior_logit)  # expect: AG001

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec_out(self.dec(z)), mu, logvar


def elbo_loss(logits, x, mu, logvar):
    rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.shape[0]
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.shape[0]
    return rec + kl


def main():
    torch.manual_seed(0)
    probs = torch.rand(64) * 0.6
    data = torch.bernoulli(probs.expand(512, 64))
    model = BernoulliVAE(data.mean(0))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        perm = torch.randperm(len(data))
        total = 0.0
        for i in range(0, len(data), 64):
            x = data[perm[i:i + 64]]
            logits, mu, logvar = model(x)
            loss = elbo_loss(logits, x, mu, logvar)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {epoch} elbo {total / 8:.2f}")


if __name__ == "__main__":
    main()
