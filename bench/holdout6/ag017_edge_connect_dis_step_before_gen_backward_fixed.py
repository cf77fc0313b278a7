# source: https://github.com/knazeri/edge-connect/issues/188
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Twin (the thread's fix: both backward() calls before the optimizer steps). EdgeConnect's EdgeModel: `process()` builds both losses from one forward (the generator's edges go through the
discriminator for the adversarial and feature-matching terms), then `backward()` runs `dis_loss.backward()`,
`dis_optimizer.step()` and only then `gen_loss.backward()`, whose graph saved the discriminator's old weights."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class EdgeGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.InstanceNorm2d(16), nn.ReLU(True))
        self.middle = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(True))
        self.decoder = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.middle(self.encoder(x))))


class Discriminator(nn.Module):
    def __init__(self, in_channels=2):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True))
        self.conv2 = nn.Sequential(nn.Conv2d(16, 32, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True))
        self.conv3 = nn.Conv2d(32, 1, 3, padding=1)

    def forward(self, x):
        c1 = self.conv1(x)
        c2 = self.conv2(c1)
        out = torch.sigmoid(self.conv3(c2))
        return out, [c1, c2]


class AdversarialLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.BCELoss()

    def forward(self, outputs, is_real, is_disc=None):
        labels = torch.ones_like(outputs) if is_real else torch.zeros_like(outputs)
        return self.criterion(outputs, labels)


class EdgeModel(nn.Module):
    def __init__(self, fm_weight=10.0):
        super().__init__()
        self.generator = EdgeGenerator()
        self.discriminator = Discriminator()
        self.adversarial_loss = AdversarialLoss()
        self.l1_loss = nn.L1Loss()
        self.fm_weight = fm_weight
        self.gen_optimizer = torch.optim.Adam(self.generator.parameters(), lr=1e-4, betas=(0.0, 0.9))
        self.dis_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=1e-5, betas=(0.0, 0.9))

    def forward(self, images, edges, masks):
        edges_masked = edges * (1 - masks)
        images_masked = images * (1 - masks) + masks
        return self.generator(torch.cat((images_masked, edges_masked, masks), dim=1))

    def process(self, images, edges, masks):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
        outputs = self(images, edges, masks)

        dis_real, dis_real_feat = self.discriminator(torch.cat((images, edges), dim=1))
        dis_fake, _ = self.discriminator(torch.cat((images, outputs.detach()), dim=1))
        dis_loss = (self.adversarial_loss(dis_real, True, True) + self.adversarial_loss(dis_fake, False, True)) / 2

        gen_fake, gen_fake_feat = self.discriminator(torch.cat((images, outputs), dim=1))
        gen_loss = self.adversarial_loss(gen_fake, True, False)
        gen_fm_loss = 0
        for fake_feat, real_feat in zip(gen_fake_feat, dis_real_feat):
            gen_fm_loss = gen_fm_loss + self.l1_loss(fake_feat, real_feat.detach())
        gen_loss = gen_loss + gen_fm_loss * self.fm_weight
        logs = [("l_d1", dis_loss.item()), ("l_g1", gen_loss.item())]
        return outputs, gen_loss, dis_loss, logs

    def backward(self, gen_loss=None, dis_loss=None):
        if dis_loss is not None:
            dis_loss.backward()
        if gen_loss is not None:
            gen_loss.backward()
        self.dis_optimizer.step()
        self.gen_optimizer.step()


model = EdgeModel()
for it in range(2):
    images = torch.rand(2, 1, 16, 16)
    edges = (torch.rand(2, 1, 16, 16) > 0.8).float()
    masks = (torch.rand(2, 1, 16, 16) > 0.7).float()
    outputs, gen_loss, dis_loss, logs = model.process(images, edges, masks)
    model.backward(gen_loss, dis_loss)
    print(it, logs)
