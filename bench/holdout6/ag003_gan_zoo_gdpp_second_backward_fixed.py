# source: https://github.com/facebookresearch/pytorch_GAN_zoo/issues/83
# symptom: Trying to backward through the graph a second time
"""Twin (the fix of PR #85 linked from the issue: `lossGFake.backward(retain_graph=True)`, the GDPP loss then reuses the graph). pytorch_GAN_zoo BaseGAN with the GDPP option: the generator step back-propagates `lossGFake` and frees the
graph of `netD(predFakeG, True)`; then `GDPPLoss(phiDReal, phiGFake, backward=True)` calls backward again
through `phiGFake`, which came out of that same freed forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def GDPPLoss(phiFake, phiReal, backward=True):
    """Determinantal point process loss between fake and real discriminator features."""

    def compute_diversity(phi):
        phi = F.normalize(phi, p=2, dim=1)
        sb = phi @ phi.t()
        eig_vals, eig_vecs = torch.linalg.eigh(sb)
        return eig_vals, eig_vecs

    def normalize_min_max(eig_vals):
        lo, hi = eig_vals.min(), eig_vals.max()
        return (eig_vals - lo) / (hi - lo + 1e-8)

    fake_vals, fake_vecs = compute_diversity(phiFake)
    real_vals, real_vecs = compute_diversity(phiReal)
    magnitude_loss = 0.0001 * F.mse_loss(fake_vals, real_vals)
    structure_loss = -torch.sum(torch.mul(fake_vecs, real_vecs), 0)
    weights = normalize_min_max(real_vals)
    loss = magnitude_loss + torch.sum(weights * structure_loss)
    if backward:
        loss.backward()
    return loss.item()


class Generator(nn.Module):
    def __init__(self, dim_latent=8, dim_out=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim_latent, 32), nn.LeakyReLU(0.2), nn.Linear(32, dim_out), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, dim_in=16, dim_feat=12):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(dim_in, 32), nn.LeakyReLU(0.2), nn.Linear(32, dim_feat), nn.LeakyReLU(0.2))
        self.decision = nn.Linear(dim_feat, 1)

    def forward(self, x, getFeature=False):
        phi = self.features(x)
        out = self.decision(phi)
        if getFeature:
            return out, phi
        return out


class WGANGPCriterion:
    def getCriterion(self, input, status):
        return -input[:, 0].mean() if status else input[:, 0].mean()


class Config:
    GDPP = True
    dimLatent = 8


class BaseGAN:
    def __init__(self, config):
        self.config = config
        self.netG = Generator(config.dimLatent)
        self.netD = Discriminator()
        self.optimizerG = torch.optim.Adam(self.netG.parameters(), lr=1e-3, betas=(0.0, 0.99))
        self.optimizerD = torch.optim.Adam(self.netD.parameters(), lr=1e-3, betas=(0.0, 0.99))
        self.lossCriterion = WGANGPCriterion()

    def buildNoiseData(self, n_samples):
        return torch.randn(n_samples, self.config.dimLatent)

    def optimizeParameters(self, input_batch):
        allLosses = {}
        self.real_input = input_batch
        n_samples = input_batch.size(0)

        # Update the discriminator
        self.optimizerD.zero_grad()
        predRealD = self.netD(self.real_input, False)
        lossD = self.lossCriterion.getCriterion(predRealD, True)
        inputLatent = self.buildNoiseData(n_samples)
        predFakeG = self.netG(inputLatent).detach()
        predFakeD = self.netD(predFakeG, False)
        lossD = lossD + self.lossCriterion.getCriterion(predFakeD, False)
        allLosses["lossD"] = lossD.item()
        lossD.backward()
        self.optimizerD.step()

        # Update the generator
        self.optimizerG.zero_grad()
        self.optimizerD.zero_grad()
        inputNoise = self.buildNoiseData(n_samples)
        predFakeG = self.netG(inputNoise)
        predFakeD, phiGFake = self.netD(predFakeG, True)
        lossGFake = self.lossCriterion.getCriterion(predFakeD, True)
        allLosses["lossG_fake"] = lossGFake.item()
        lossGFake.backward(retain_graph=True)

        if self.config.GDPP:
            _, phiDReal = self.netD.forward(self.real_input, True)
            allLosses["lossG_GDPP"] = GDPPLoss(phiDReal, phiGFake, backward=True)

        self.optimizerG.step()
        return allLosses


model = BaseGAN(Config())
for step in range(3):
    losses = model.optimizeParameters(torch.randn(10, 16))
    print(step, {k: round(v, 4) for k, v in losses.items()})
