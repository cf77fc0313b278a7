# source: https://github.com/Adversarial-Deep-Learning/code-soup/issues/69
# symptom: discriminator gradients carried over from the previous step: True
"""code-soup `GAN.step`, fixed as the issue asks and pull request #74 did: `self.discriminator.zero_grad()` before the
discriminator's losses are backpropagated."""
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, image_size, channels, latent_dims, lr):
        super(Generator, self).__init__()
        self.image_size, self.channels, self.latent_dims = image_size, channels, latent_dims
        self.main = nn.Sequential(
            nn.Linear(self.latent_dims, 64), nn.LeakyReLU(0.2),
            nn.Linear(64, 128), nn.LeakyReLU(0.2),
            nn.Linear(128, self.image_size * self.image_size * self.channels), nn.Tanh(),
        )
        self.optimizer = optim.Adam(self.parameters(), lr=lr)

    def forward(self, x):
        output = self.main(x)
        return output.view(-1, self.channels, self.image_size, self.image_size)


class Discriminator(nn.Module):
    def __init__(self, image_size, channels, lr):
        super(Discriminator, self).__init__()
        self.image_size, self.channels = image_size, channels
        self.main = nn.Sequential(
            nn.Linear(self.image_size * self.image_size * self.channels, 128), nn.LeakyReLU(0.2), nn.Dropout(0.3),
            nn.Linear(128, 64), nn.LeakyReLU(0.2), nn.Dropout(0.3),
            nn.Linear(64, 1), nn.Sigmoid(),
        )
        self.optimizer = optim.Adam(self.parameters(), lr=lr)

    def forward(self, x):
        x = x.view(-1, self.image_size * self.image_size * self.channels)
        return self.main(x)


class GAN:
    def __init__(self, image_size, channels, latent_dims, device, lr):
        self.image_size, self.channels, self.latent_dims, self.device = image_size, channels, latent_dims, device
        self.generator = Generator(image_size, channels, latent_dims, lr).to(device)
        self.discriminator = Discriminator(image_size, channels, lr).to(device)
        self.criterion = torch.nn.BCELoss()
        self.real_label, self.fake_label = 1.0, 0.0
        self.stale = []

    def step(self, data):
        real_image, _ = data
        real_image = real_image.to(self.device)
        batch_size = real_image.shape[0]
        self.discriminator.zero_grad()
        self.stale.append(any(p.grad is not None and bool(p.grad.abs().sum() > 0)
                              for p in self.discriminator.parameters()))
        label = torch.full((batch_size,), self.real_label, dtype=torch.float, device=self.device)
        # Forward pass real batch through D
        output = self.discriminator(real_image).view(-1)
        errD_real = self.criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        # Train with all-fake batch
        noise = torch.randn(batch_size, self.latent_dims, device=self.device)
        fake = self.generator(noise)
        label.fill_(self.fake_label)
        output = self.discriminator(fake.detach()).view(-1)
        errD_fake = self.criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        # Update D
        self.discriminator.optimizer.step()

        self.generator.zero_grad()
        label.fill_(self.real_label)  # fake labels are real for generator cost
        output = self.discriminator(fake).view(-1)
        errG = self.criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        # Update G
        self.generator.optimizer.step()
        return D_x, D_G_z1, errD, D_G_z2


images = torch.rand(64, 1, 8, 8) * 2 - 1
train_loader = [(images[i:i + 16], torch.zeros(16)) for i in range(0, 64, 16)]
gan = GAN(image_size=8, channels=1, latent_dims=16, device=torch.device("cpu"), lr=2e-4)
for epoch in range(2):
    for data in train_loader:
        D_x, D_G_z1, errD, D_G_z2 = gan.step(data)
    print(f"epoch {epoch} errD {errD.item():.4f} D(x) {D_x:.4f} D(G(z)) {D_G_z1:.4f} / {D_G_z2:.4f}")
print(f"discriminator gradients carried over from the previous step: {any(gan.stale)}")
