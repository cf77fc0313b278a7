# source: https://github.com/YannDubs/disentangling-vae/issues/62
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Twin (the repository's fix for this issue: both backward passes first, the two `step()` calls at the end, "update
at the end (since pytorch 1.5. complains if update before)"). disentangling-vae `FactorKLoss.__call__` (Factor-VAE, Algorithm 2): `d_z = self.discriminator(latent_sample1)` is
used in the VAE loss and again in the discriminator's TC loss; the loss runs `vae_loss.backward(retain_graph=True)`
and stepped the VAE before `d_tc_loss.backward()` walked back through the encoder it had changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, img_size=(1, 8, 8), latent_dim=4):
        super().__init__()
        n = img_size[0] * img_size[1] * img_size[2]
        self.lin1 = nn.Linear(n, 32)
        self.mu_logvar_gen = nn.Linear(32, latent_dim * 2)
        self.latent_dim = latent_dim

    def forward(self, x):
        x = torch.relu(self.lin1(x.view(x.size(0), -1)))
        mu_logvar = self.mu_logvar_gen(x).view(-1, self.latent_dim, 2)
        return mu_logvar.unbind(-1)


class Decoder(nn.Module):
    def __init__(self, img_size=(1, 8, 8), latent_dim=4):
        super().__init__()
        self.img_size = img_size
        self.lin = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, 64))

    def forward(self, z):
        return torch.sigmoid(self.lin(z)).view(z.size(0), *self.img_size)


class VAE(nn.Module):
    def __init__(self, latent_dim=4):
        super().__init__()
        self.encoder = Encoder(latent_dim=latent_dim)
        self.decoder = Decoder(latent_dim=latent_dim)

    def reparameterize(self, mean, logvar):
        if self.training:
            std = torch.exp(0.5 * logvar)
            return mean + std * torch.randn_like(std)
        return mean

    def forward(self, x):
        latent_dist = self.encoder(x)
        latent_sample = self.reparameterize(*latent_dist)
        return self.decoder(latent_sample), latent_dist, latent_sample

    def sample_latent(self, x):
        return self.reparameterize(*self.encoder(x))


class Discriminator(nn.Module):
    def __init__(self, neg_slope=0.2, latent_dim=4, hidden_units=32):
        super().__init__()
        self.neg_slope = neg_slope
        self.lin1 = nn.Linear(latent_dim, hidden_units)
        self.lin2 = nn.Linear(hidden_units, hidden_units)
        self.lin3 = nn.Linear(hidden_units, 2)

    def forward(self, z):
        z = F.leaky_relu(self.lin1(z), self.neg_slope)
        z = F.leaky_relu(self.lin2(z), self.neg_slope)
        return self.lin3(z)


def _reconstruction_loss(data, recon_data):
    return F.binary_cross_entropy(recon_data, data, reduction="sum") / data.size(0)


def _kl_normal_loss(mean, logvar):
    latent_kl = 0.5 * (-1 - logvar + mean.pow(2) + logvar.exp()).mean(dim=0)
    return latent_kl.sum()


def _permute_dims(latent_sample):
    perm = torch.zeros_like(latent_sample)
    batch_size, dim_z = perm.size()
    for z in range(dim_z):
        pi = torch.randperm(batch_size)
        perm[:, z] = latent_sample[pi, z]
    return perm


class FactorKLoss:
    def __init__(self, gamma=10., disc_kwargs=dict(neg_slope=0.2, latent_dim=4, hidden_units=32),
                 optim_kwargs=dict(lr=5e-4, betas=(0.5, 0.9))):
        self.gamma = gamma
        self.discriminator = Discriminator(**disc_kwargs)
        self.optimizer_d = optim.Adam(self.discriminator.parameters(), **optim_kwargs)

    def __call__(self, data, model, optimizer, storer):
        half_batch_size = data.size(0) // 2
        data1, data2 = data.split(half_batch_size)

        # Factor VAE Loss
        recon_batch, latent_dist, latent_sample1 = model(data1)
        rec_loss = _reconstruction_loss(data1, recon_batch)
        kl_loss = _kl_normal_loss(*latent_dist)
        d_z = self.discriminator(latent_sample1)
        tc_loss = (F.logsigmoid(d_z) - F.logsigmoid(1 - d_z)).clamp(0).mean()
        vae_loss = rec_loss + kl_loss + self.gamma * tc_loss
        storer['loss'].append(vae_loss.item())

        if not model.training:
            return vae_loss

        # Run VAE optimizer
        optimizer.zero_grad()
        vae_loss.backward(retain_graph=True)

        # Discriminator Loss
        latent_sample2 = model.sample_latent(data2)
        z_perm = _permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)
        d_tc_loss = - (0.5 * (F.logsigmoid(d_z) + F.logsigmoid(1 - d_z_perm))).mean()

        # Run discriminator optimizer
        self.optimizer_d.zero_grad()
        d_tc_loss.backward()
        optimizer.step()
        self.optimizer_d.step()
        storer['discrim_loss'].append(d_tc_loss.item())
        return vae_loss


class Trainer:
    def __init__(self, model, optimizer, loss_f):
        self.model, self.optimizer, self.loss_f = model, optimizer, loss_f

    def _train_epoch(self, data_loader, epoch):
        storer = {'loss': [], 'discrim_loss': []}
        for data in data_loader:
            self.loss_f(data, self.model, self.optimizer, storer)
        print(f"epoch {epoch} | loss {sum(storer['loss']) / len(storer['loss']):.3f}")

    def __call__(self, data_loader, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            self._train_epoch(data_loader, epoch)


model = VAE()
trainer = Trainer(model, optim.Adam(model.parameters(), lr=5e-4), FactorKLoss())
trainer([torch.rand(8, 1, 8, 8) for _ in range(3)])
