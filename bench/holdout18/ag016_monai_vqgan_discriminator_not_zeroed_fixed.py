# source: https://github.com/Project-MONAI/GenerativeModels/issues/102
# symptom: discriminator gradients carried over before its backward: True
"""MONAI GenerativeModels 2D VQGAN tutorial: a VQVAE generator trained with L1 + perceptual + adversarial losses
against a patch discriminator. The loop zeroes `optimizer_g` only; the discriminator's gradients are never cleared,
so each `optimizer_d.step()` uses the gradients of every earlier discriminator step plus those the generator loss
pushed through the discriminator.

Fixed as the tutorial now has it: `optimizer_d.zero_grad(set_to_none=True)` at the start of the discriminator part."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import L1Loss


class VQVAE(nn.Module):
    def __init__(self, num_embeddings=16, embedding_dim=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, embedding_dim, 3, 1, 1))
        self.codebook = nn.Embedding(num_embeddings, embedding_dim)
        self.decoder = nn.Sequential(nn.ConvTranspose2d(embedding_dim, 16, 4, 2, 1), nn.ReLU(),
                                     nn.Conv2d(16, 1, 3, 1, 1))

    def forward(self, images):
        z = self.encoder(images)
        flat = z.permute(0, 2, 3, 1).reshape(-1, z.shape[1])
        idx = torch.cdist(flat, self.codebook.weight).argmin(dim=1)
        q = self.codebook(idx).view(z.shape[0], z.shape[2], z.shape[3], -1).permute(0, 3, 1, 2)
        quantization_loss = F.mse_loss(q, z.detach()) + 0.25 * F.mse_loss(z, q.detach())
        q = z + (q - z).detach()
        return self.decoder(q), quantization_loss


class PatchDiscriminator(nn.Module):
    def __init__(self, num_channels=16):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(1, num_channels, 4, 2, 1), nn.LeakyReLU(0.2)),
            nn.Sequential(nn.Conv2d(num_channels, num_channels, 4, 2, 1), nn.BatchNorm2d(num_channels),
                          nn.LeakyReLU(0.2)),
            nn.Conv2d(num_channels, 1, 3, 1, 1),
        ])

    def forward(self, x):
        outs = []
        for block in self.blocks:
            x = block(x)
            outs.append(x)
        return outs


class PerceptualLoss(nn.Module):
    # stand-in for the AlexNet-based perceptual loss: a fixed random feature extractor
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1))
        for p in self.features.parameters():
            p.requires_grad_(False)

    def forward(self, x, y):
        return F.l1_loss(self.features(x), self.features(y))


class PatchAdversarialLoss:
    def __call__(self, logits, target_is_real, for_discriminator):
        target = torch.ones_like(logits) if target_is_real else torch.zeros_like(logits)
        return F.mse_loss(logits, target)


torch.manual_seed(0)
train_loader = [{"image": torch.rand(4, 1, 16, 16)} for _ in range(3)]
model = VQVAE()
discriminator = PatchDiscriminator()
perceptual_loss = PerceptualLoss()
optimizer_g = torch.optim.Adam(params=model.parameters(), lr=1e-4)
optimizer_d = torch.optim.Adam(params=discriminator.parameters(), lr=5e-4)
l1_loss = L1Loss()
adv_loss = PatchAdversarialLoss()
adv_weight = 0.01
perceptual_weight = 0.001

carried_over = False
n_epochs = 2
for epoch in range(n_epochs):
    model.train()
    discriminator.train()
    epoch_loss = 0
    for step, batch in enumerate(train_loader):
        images = batch["image"]
        optimizer_g.zero_grad(set_to_none=True)

        # Generator part
        reconstruction, quantization_loss = model(images=images)
        logits_fake = discriminator(reconstruction.contiguous().float())[-1]
        recons_loss = l1_loss(reconstruction.float(), images.float())
        p_loss = perceptual_loss(reconstruction.float(), images.float())
        generator_loss = adv_loss(logits_fake, target_is_real=True, for_discriminator=False)
        loss_g = recons_loss + quantization_loss + perceptual_weight * p_loss + adv_weight * generator_loss
        loss_g.backward()
        optimizer_g.step()

        # Discriminator part
        optimizer_d.zero_grad(set_to_none=True)

        logits_fake = discriminator(reconstruction.contiguous().detach())[-1]
        loss_d_fake = adv_loss(logits_fake, target_is_real=False, for_discriminator=True)
        logits_real = discriminator(images.contiguous().detach())[-1]
        loss_d_real = adv_loss(logits_real, target_is_real=True, for_discriminator=True)
        discriminator_loss = (loss_d_fake + loss_d_real) * 0.5
        loss_d = adv_weight * discriminator_loss
        carried_over = carried_over or any(p.grad is not None and bool(p.grad.abs().sum() > 0)
                                           for p in discriminator.parameters())
        loss_d.backward()
        optimizer_d.step()

        epoch_loss += recons_loss.item()
    print("epoch", epoch, "recons_loss {:.4f}".format(epoch_loss / (step + 1)))

print("discriminator gradients carried over before its backward:", carried_over)
