# source: https://github.com/leftthomas/SRGAN/issues/89 (pattern: SRGAN train loop backprops the discriminator loss with retain_graph=True, steps D, then backprops the generator loss through the same fake_out graph)
# symptom: modified by an inplace operation
"""Tiny SRGAN-style training loop: generator upsamples, discriminator scores, one shared forward per batch.

Fixed: the discriminator sees `fake_img.detach()` for its own loss, and after `optimizerD.step()` the
generator loss is computed from a fresh discriminator forward, so no retained graph is reused.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.PReLU(), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        return torch.tanh(self.body(x))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Flatten(), nn.Linear(8 * 8 * 8, 1))

    def forward(self, x):
        return torch.sigmoid(self.net(x))


def generator_criterion(out_labels, out_images, target_images):
    adversarial_loss = torch.mean(1 - out_labels)
    image_loss = F.mse_loss(out_images, target_images)
    return image_loss + 0.001 * adversarial_loss


netG, netD = Generator(), Discriminator()
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-3)

for epoch in range(2):
    for _ in range(3):
        target = torch.rand(4, 1, 16, 16) * 2 - 1
        data = F.avg_pool2d(target, 2)
        fake_img = netG(data)

        netD.zero_grad()
        real_out = netD(target).mean()
        fake_out = netD(fake_img.detach()).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward()
        optimizerD.step()

        netG.zero_grad()
        fake_out = netD(fake_img).mean()
        g_loss = generator_criterion(fake_out, fake_img, target)
        g_loss.backward()
        optimizerG.step()
    print(f"epoch {epoch} d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")
