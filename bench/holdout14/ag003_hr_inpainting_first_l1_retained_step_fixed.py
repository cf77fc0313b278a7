"""High-Resolution Image Inpainting GAN: the coarse L1 loss is backpropagated with its graph kept, the coarse net is
stepped, and the same loss is then backpropagated again inside the total generator loss.

`WGAN_trainer` (trainer.py) runs the two-stage generator once per batch. After the discriminator update it does
`first_MaskL1Loss.backward(retain_graph=True); optimizer_g1.step()` (the coarse network only) and then
`loss = 0.5 * lambda_l1 * first_MaskL1Loss + lambda_l1 * second_MaskL1Loss + GAN_Loss + perceptual; loss.backward()`.
That second backward goes through the retained graph, whose saved coarse-network weights `optimizer_g1.step()` has
just rewritten in place, so the first batch stops with a version-counter error. (The discriminator's
`loss_D.backward(retain_graph=True)` also keeps a graph that nothing uses again: the generator step runs the
discriminator anew.)

Clean twin: the reporter's workaround, a second pass through the generator after the coarse network's step, so the
total generator loss is built from fresh outputs and no graph needs to be kept (nor the discriminator's).
"""
# source: https://github.com/wangyx240/High-Resolution-Image-Inpainting-GAN/issues/7
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=1, activation=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.mask_conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.activation = activation

    def forward(self, x):
        conv = self.conv(x)
        if self.activation:
            conv = F.elu(conv)
        return conv * torch.sigmoid(self.mask_conv(x))


class CoarseNet(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.body = nn.Sequential(GatedConv2d(4, ch), GatedConv2d(ch, ch, 3, 2, 1), GatedConv2d(ch, ch),
                                  nn.Upsample(scale_factor=2), GatedConv2d(ch, ch), GatedConv2d(ch, 3, activation=False))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


class RefineNet(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.body = nn.Sequential(GatedConv2d(4, ch), GatedConv2d(ch, ch, 3, 2, 1), GatedConv2d(ch, ch),
                                  nn.Upsample(scale_factor=2), GatedConv2d(ch, 3, activation=False))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


class GatedGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.coarse = CoarseNet()
        self.refinement = RefineNet()

    def forward(self, img, mask):
        first_masked_img = img * (1 - mask) + mask
        first_out = self.coarse(torch.cat((first_masked_img, mask), 1))
        second_masked_img = img * (1 - mask) + first_out * mask
        second_out = self.refinement(torch.cat((second_masked_img, mask), 1))
        return first_out, second_out


class PatchDiscriminator(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(4, ch, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(ch, ch * 2, 4, 2, 1),
                                  nn.LeakyReLU(0.2), nn.Conv2d(ch * 2, 1, 3, 1, 1))

    def forward(self, img, mask):
        return self.body(torch.cat((img, mask), 1))


class PerceptualNet(nn.Module):
    """Stand-in for the frozen VGG16 feature extractor."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU())
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.features(x)


def WGAN_trainer(epochs=2, lambda_l1=100.0, lambda_perceptual=10.0):
    generator = GatedGenerator()
    discriminator = PatchDiscriminator()
    perceptualnet = PerceptualNet()
    L1Loss = nn.L1Loss()
    RELU = nn.ReLU()
    optimizer_g1 = torch.optim.Adam(generator.coarse.parameters(), lr=1e-4)
    optimizer_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
    optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=4e-4)

    imgs = torch.rand(8, 3, 32, 32)
    masks = torch.zeros(8, 1, 32, 32)
    masks[:, :, 8:24, 8:24] = 1.0
    dataloader = [(imgs[i:i + 4], masks[i:i + 4]) for i in range(0, 8, 4)]

    for epoch in range(epochs):
        for batch_idx, (img, mask) in enumerate(dataloader):
            first_out, second_out = generator(img, mask)
            first_out_wholeimg = img * (1 - mask) + first_out * mask
            second_out_wholeimg = img * (1 - mask) + second_out * mask

            for wk in range(1):
                optimizer_d.zero_grad()
                fake_scalar = discriminator(second_out_wholeimg.detach(), mask)
                true_scalar = discriminator(img, mask)
                loss_D = torch.mean(RELU(1 - true_scalar)) + torch.mean(RELU(fake_scalar + 1))
                loss_D.backward()
                optimizer_d.step()

            # Train Generator
            first_MaskL1Loss = L1Loss(first_out_wholeimg, img)
            second_MaskL1Loss = L1Loss(second_out_wholeimg, img)
            fake_scalar = discriminator(second_out_wholeimg, mask)
            GAN_Loss = -torch.mean(fake_scalar)

            optimizer_g1.zero_grad()
            first_MaskL1Loss.backward()
            optimizer_g1.step()

            # second pass through the generator, after the coarse network's step
            first_out, second_out = generator(img, mask)
            first_out_wholeimg = img * (1 - mask) + first_out * mask
            second_out_wholeimg = img * (1 - mask) + second_out * mask
            first_MaskL1Loss = L1Loss(first_out_wholeimg, img)
            second_MaskL1Loss = L1Loss(second_out_wholeimg, img)
            fake_scalar = discriminator(second_out_wholeimg, mask)
            GAN_Loss = -torch.mean(fake_scalar)

            optimizer_g.zero_grad()
            img_featuremaps = perceptualnet(img)
            second_out_wholeimg_featuremaps = perceptualnet(second_out_wholeimg)
            second_PerceptualLoss = L1Loss(second_out_wholeimg_featuremaps, img_featuremaps)
            loss = (0.5 * lambda_l1 * first_MaskL1Loss + lambda_l1 * second_MaskL1Loss + GAN_Loss
                    + second_PerceptualLoss * lambda_perceptual)
            loss.backward()
            optimizer_g.step()

            print(f"[Epoch {epoch + 1}/{epochs}] [Batch {batch_idx + 1}/{len(dataloader)}] "
                  f"[first Mask L1 Loss: {first_MaskL1Loss.item():.5f}] [second Mask L1 Loss: "
                  f"{second_MaskL1Loss.item():.5f}] [D Loss: {loss_D.item():.5f}] [G Loss: {GAN_Loss.item():.5f}]")


if __name__ == "__main__":
    torch.manual_seed(0)
    WGAN_trainer()
