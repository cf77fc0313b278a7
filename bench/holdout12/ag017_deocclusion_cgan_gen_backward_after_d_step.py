# source: https://github.com/XiaohangZhan/deocclusion/pull/39
# symptom: modified by an inplace operation
"""deocclusion `PartialCompletionContentCGAN.step()`: the discriminator loss uses `output.detach()`,
but the generator's adversarial term `gen_fake, _ = self.netD(output)` is computed in the same forward,
before `optimD.step()` rewrites the discriminator's weights in place. `gen_loss.backward()` then needs
the old weights (issue #38, newer PyTorch); the pull request swaps the two updates."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def average_gradients(model):
    """Distributed all-reduce of the gradients in the repository; one process here."""
    return model


class InpaintGenerator(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(4, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.decoder = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, rgb, visible_mask):
        feat = self.encoder(torch.cat([rgb, visible_mask], dim=1))
        return torch.tanh(self.decoder(feat)), feat


class Discriminator(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.conv1 = nn.Conv2d(3, ch, 4, stride=2, padding=1)
        self.conv2 = nn.Conv2d(ch, ch * 2, 4, stride=2, padding=1)
        self.conv3 = nn.Conv2d(ch * 2, 1, 3, padding=1)

    def forward(self, x):
        c1 = F.leaky_relu(self.conv1(x), 0.2)
        c2 = F.leaky_relu(self.conv2(c1), 0.2)
        return self.conv3(c2), [c1, c2]


class AdversarialLoss(nn.Module):
    def forward(self, outputs, is_real, is_disc):
        labels = torch.full_like(outputs, 1.0 if is_real else 0.0)
        return F.binary_cross_entropy_with_logits(outputs, labels)


class PartialCompletionContentCGAN:
    def __init__(self, params):
        self.params = params
        self.world_size = 1
        self.model = InpaintGenerator()
        self.netD = Discriminator()
        self.optim = torch.optim.Adam(self.model.parameters(), lr=params["lr"], betas=(0.0, 0.9))
        self.optimD = torch.optim.Adam(self.netD.parameters(), lr=params["lr"] * params["d2g_lr"], betas=(0.0, 0.9))
        self.gan_criterion = AdversarialLoss()

    def criterion(self, rgb, visible_mask3, output, rgb_gt):
        hole = 1 - visible_mask3
        return {"valid": F.l1_loss(output * visible_mask3, rgb_gt * visible_mask3),
                "hole": F.l1_loss(output * hole, rgb_gt * hole)}

    def set_input(self, rgb, visible_mask3, rgb_gt):
        self.rgb, self.visible_mask3, self.rgb_gt = rgb, visible_mask3, rgb_gt

    def step(self):
        output, _ = self.model(self.rgb, self.visible_mask3)

        # discriminator loss
        dis_real, _ = self.netD(self.rgb_gt)
        dis_fake, _ = self.netD(output.detach())
        dis_real_loss = self.gan_criterion(dis_real, True, True) / self.world_size
        dis_fake_loss = self.gan_criterion(dis_fake, False, True) / self.world_size
        dis_loss = (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_loss = 0
        gen_fake, _ = self.netD(output)
        gen_gan_loss = self.gan_criterion(gen_fake, True, False) * self.params["adv_loss_weight"] / self.world_size
        gen_loss += gen_gan_loss

        # other losses
        loss_dict = self.criterion(self.rgb, self.visible_mask3, output, self.rgb_gt)
        for key, coef in self.params["lambda_dict"].items():
            gen_loss += coef * loss_dict[key]
        loss_dict["dis"] = dis_loss
        loss_dict["adv"] = gen_gan_loss

        # update
        self.optimD.zero_grad()
        dis_loss.backward()
        average_gradients(self.netD)
        self.optimD.step()

        self.optim.zero_grad()
        gen_loss.backward()  # expect: AG017
        average_gradients(self.model)
        self.optim.step()
        return loss_dict


def main():
    params = {"lr": 1e-4, "d2g_lr": 0.1, "adv_loss_weight": 0.1, "lambda_dict": {"valid": 1.0, "hole": 6.0}}
    trainer = PartialCompletionContentCGAN(params)
    for it in range(3):
        rgb_gt = torch.rand(2, 3, 16, 16) * 2 - 1
        visible = (torch.rand(2, 1, 16, 16) > 0.3).float()
        trainer.set_input(rgb_gt * visible, visible, rgb_gt)
        losses = trainer.step()
        print(f"iter {it}: dis {losses['dis'].item():.4f} adv {losses['adv'].item():.4f}")


if __name__ == "__main__":
    main()
