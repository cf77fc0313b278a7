# source: https://github.com/HsinYingLee/DRIT/issues/48
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""DRIT `src/model.py`, `DRIT.update_EG`: `backward_EG()` ends with `loss_G.backward(retain_graph=True)`, the
encoder and generator optimizers step, and then `backward_G_alone()` backpropagates the latent-regression and
second-discriminator losses through the same retained forward (`fake_A_random`, `z_attr_random_a`, ...), whose
generator weights the steps have just changed in place; training fails on PyTorch >= 1.5. Written for this set
with the model's structure (content/attribute encoders, a generator with forward_a/forward_b, disA/disB/disA2/
disB2/disContent, `forward`, `update_D`, `backward_D`, `update_EG`, `backward_EG`, `backward_G_GAN`,
`backward_G_alone`, the train loop calling update_D then update_EG) with `concat=False` and `no_ms=True`, tiny
convolutional networks and random 16x16 image pairs.

Fixed twin: the change a commenter in the issue made and reported working: `backward_EG()` (still with
`retain_graph=True`) and `backward_G_alone()` both run before the three optimizers step once."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class E_content(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.conv_a = nn.Sequential(nn.Conv2d(3, ch, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(ch, ch, 4, 2, 1), nn.ReLU())
        self.conv_b = nn.Sequential(nn.Conv2d(3, ch, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(ch, ch, 4, 2, 1), nn.ReLU())

    def forward(self, xa, xb):
        return self.conv_a(xa), self.conv_b(xb)


class E_attr(nn.Module):
    def __init__(self, nz=4):
        super().__init__()
        self.enc_a = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, nz))
        self.enc_b = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, nz))

    def forward(self, xa, xb):
        return self.enc_a(xa), self.enc_b(xb)


class G(nn.Module):
    def __init__(self, ch=8, nz=4):
        super().__init__()
        def dec():
            return nn.Sequential(nn.ConvTranspose2d(ch + nz, ch, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(ch, 3, 4, 2, 1), nn.Tanh())
        self.dec_a, self.dec_b = dec(), dec()

    def _cat(self, x, z):
        return torch.cat([x, z[:, :, None, None].expand(-1, -1, x.size(2), x.size(3))], dim=1)

    def forward_a(self, x, z):
        return self.dec_a(self._cat(x, z))

    def forward_b(self, x, z):
        return self.dec_b(self._cat(x, z))


class Dis(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 2, 1))

    def forward(self, x):
        return [self.model(x)]


class Dis_content(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(ch, 8, 3, 1, 1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 1))

    def forward(self, x):
        return [self.model(x).view(-1)]


class DRIT(nn.Module):
    def __init__(self, nz=4, lr=1e-3):
        super().__init__()
        self.nz, self.concat, self.no_ms = nz, False, True
        self.disA, self.disB, self.disA2, self.disB2 = Dis(), Dis(), Dis(), Dis()
        self.disContent = Dis_content()
        self.enc_c, self.enc_a, self.gen = E_content(), E_attr(nz), G(nz=nz)
        adam = lambda m: torch.optim.Adam(m.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=1e-4)
        self.disA_opt, self.disB_opt = adam(self.disA), adam(self.disB)
        self.disA2_opt, self.disB2_opt = adam(self.disA2), adam(self.disB2)
        self.disContent_opt = adam(self.disContent)
        self.enc_c_opt, self.enc_a_opt, self.gen_opt = adam(self.enc_c), adam(self.enc_a), adam(self.gen)
        self.criterionL1 = nn.L1Loss()

    def get_z_random(self, batchSize, nz):
        return torch.randn(batchSize, nz)

    def forward(self):
        half_size = 1
        real_A, real_B = self.input_A, self.input_B
        self.real_A_encoded, self.real_A_random = real_A[0:half_size], real_A[half_size:]
        self.real_B_encoded, self.real_B_random = real_B[0:half_size], real_B[half_size:]
        self.z_content_a, self.z_content_b = self.enc_c.forward(self.real_A_encoded, self.real_B_encoded)
        self.z_attr_a, self.z_attr_b = self.enc_a.forward(self.real_A_encoded, self.real_B_encoded)
        self.z_random = self.get_z_random(self.real_A_encoded.size(0), self.nz)
        # first cross translation
        input_content_forA = torch.cat((self.z_content_b, self.z_content_a, self.z_content_b), 0)
        input_content_forB = torch.cat((self.z_content_a, self.z_content_b, self.z_content_a), 0)
        input_attr_forA = torch.cat((self.z_attr_a, self.z_attr_a, self.z_random), 0)
        input_attr_forB = torch.cat((self.z_attr_b, self.z_attr_b, self.z_random), 0)
        output_fakeA = self.gen.forward_a(input_content_forA, input_attr_forA)
        output_fakeB = self.gen.forward_b(input_content_forB, input_attr_forB)
        self.fake_A_encoded, self.fake_AA_encoded, self.fake_A_random = torch.split(output_fakeA, self.z_content_a.size(0), dim=0)
        self.fake_B_encoded, self.fake_BB_encoded, self.fake_B_random = torch.split(output_fakeB, self.z_content_a.size(0), dim=0)
        # second cross translation
        self.z_content_recon_b, self.z_content_recon_a = self.enc_c.forward(self.fake_A_encoded, self.fake_B_encoded)
        self.z_attr_recon_a, self.z_attr_recon_b = self.enc_a.forward(self.fake_A_encoded, self.fake_B_encoded)
        self.fake_A_recon = self.gen.forward_a(self.z_content_recon_a, self.z_attr_recon_a)
        self.fake_B_recon = self.gen.forward_b(self.z_content_recon_b, self.z_attr_recon_b)
        # for latent regression
        self.z_attr_random_a, self.z_attr_random_b = self.enc_a.forward(self.fake_A_random, self.fake_B_random)

    def update_D(self, image_a, image_b):
        self.input_A, self.input_B = image_a, image_b
        self.forward()
        for opt, netD, real, fake in ((self.disA_opt, self.disA, self.real_A_encoded, self.fake_A_encoded),
                                      (self.disA2_opt, self.disA2, self.real_A_random, self.fake_A_random),
                                      (self.disB_opt, self.disB, self.real_B_encoded, self.fake_B_encoded),
                                      (self.disB2_opt, self.disB2, self.real_B_random, self.fake_B_random)):
            opt.zero_grad()
            self.backward_D(netD, real, fake)
            opt.step()
        self.disContent_opt.zero_grad()
        self.backward_contentD(self.z_content_a, self.z_content_b)
        nn.utils.clip_grad_norm_(self.disContent.parameters(), 5)
        self.disContent_opt.step()

    def backward_D(self, netD, real, fake):
        pred_fake = netD.forward(fake.detach())
        pred_real = netD.forward(real)
        loss_D = 0
        for out_a, out_b in zip(pred_fake, pred_real):
            out_fake, out_real = torch.sigmoid(out_a), torch.sigmoid(out_b)
            loss_D += F.binary_cross_entropy(out_real, torch.ones_like(out_real)) + \
                F.binary_cross_entropy(out_fake, torch.zeros_like(out_fake))
        loss_D.backward()
        return loss_D

    def backward_contentD(self, imageA, imageB):
        pred_fake = self.disContent.forward(imageA.detach())
        pred_real = self.disContent.forward(imageB.detach())
        for out_a, out_b in zip(pred_fake, pred_real):
            out_fake, out_real = torch.sigmoid(out_a), torch.sigmoid(out_b)
            ad_true_loss = F.binary_cross_entropy(out_real, torch.ones(out_real.size(0)))
            ad_fake_loss = F.binary_cross_entropy(out_fake, torch.zeros(out_fake.size(0)))
        loss_D = ad_true_loss + ad_fake_loss
        loss_D.backward()
        return loss_D

    def update_EG(self):
        # update G, Ec, Ea
        self.enc_c_opt.zero_grad()
        self.enc_a_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_EG()
        # update G, Ec: both backward passes before any step
        self.backward_G_alone()
        self.enc_c_opt.step()
        self.enc_a_opt.step()
        self.gen_opt.step()

    def backward_G_GAN_content(self, data):
        for out in self.disContent.forward(data):
            outputs_fake = torch.sigmoid(out)
            ad_loss = F.binary_cross_entropy(outputs_fake, 0.5 * torch.ones(outputs_fake.size(0)))
        return ad_loss

    def backward_G_GAN(self, fake, netD=None):
        loss_G = 0
        for out_a in netD.forward(fake):
            outputs_fake = torch.sigmoid(out_a)
            loss_G += F.binary_cross_entropy(outputs_fake, torch.ones_like(outputs_fake))
        return loss_G

    def _l2_regularize(self, mu):
        return torch.mean(torch.pow(mu, 2))

    def backward_EG(self):
        loss_G_GAN_Acontent = self.backward_G_GAN_content(self.z_content_a)
        loss_G_GAN_Bcontent = self.backward_G_GAN_content(self.z_content_b)
        loss_G_GAN_A = self.backward_G_GAN(self.fake_A_encoded, self.disA)
        loss_G_GAN_B = self.backward_G_GAN(self.fake_B_encoded, self.disB)
        loss_kl_za_a = self._l2_regularize(self.z_attr_a) * 0.01
        loss_kl_za_b = self._l2_regularize(self.z_attr_b) * 0.01
        loss_kl_zc_a = self._l2_regularize(self.z_content_a) * 0.01
        loss_kl_zc_b = self._l2_regularize(self.z_content_b) * 0.01
        loss_G_L1_A = self.criterionL1(self.fake_A_recon, self.real_A_encoded) * 10
        loss_G_L1_B = self.criterionL1(self.fake_B_recon, self.real_B_encoded) * 10
        loss_G_L1_AA = self.criterionL1(self.fake_AA_encoded, self.real_A_encoded) * 10
        loss_G_L1_BB = self.criterionL1(self.fake_BB_encoded, self.real_B_encoded) * 10
        loss_G = loss_G_GAN_A + loss_G_GAN_B + loss_G_GAN_Acontent + loss_G_GAN_Bcontent + \
            loss_G_L1_AA + loss_G_L1_BB + loss_G_L1_A + loss_G_L1_B + \
            loss_kl_zc_a + loss_kl_zc_b + loss_kl_za_a + loss_kl_za_b
        loss_G.backward(retain_graph=True)
        self.G_loss = loss_G.item()

    def backward_G_alone(self):
        loss_G_GAN2_A = self.backward_G_GAN(self.fake_A_random, self.disA2)
        loss_G_GAN2_B = self.backward_G_GAN(self.fake_B_random, self.disB2)
        loss_z_L1_a = torch.mean(torch.abs(self.z_attr_random_a - self.z_random)) * 10
        loss_z_L1_b = torch.mean(torch.abs(self.z_attr_random_b - self.z_random)) * 10
        loss_z_L1 = loss_z_L1_a + loss_z_L1_b + loss_G_GAN2_A + loss_G_GAN2_B
        loss_z_L1.backward()
        self.l1_recon_z_loss = loss_z_L1.item()


def main():
    torch.manual_seed(0)
    model = DRIT()
    for it in range(3):
        images_a = torch.rand(2, 3, 16, 16) * 2 - 1
        images_b = torch.rand(2, 3, 16, 16) * 2 - 1
        model.update_D(images_a, images_b)
        model.update_EG()
        print("it", it, "G_loss", round(model.G_loss, 4), "z_loss", round(model.l1_recon_z_loss, 4))


if __name__ == "__main__":
    main()
