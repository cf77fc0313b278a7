# source: https://github.com/lucidrains/stylegan2-pytorch/pull/86
# symptom: PL: nan
# Trainer.__init__ set self.pl_mean = torch.empty(1); is_empty() tests nelement() == 0, which is False for it, so
# the uninitialised value is used in the path-length penalty and folded into the moving average for good.
# (fill_uninitialized_memory makes the garbage deterministic: fresh memory reads NaN, as it may on a GPU.)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True
torch.manual_seed(0)

EPS = 1e-8


class EMA():
    def __init__(self, beta):
        self.beta = beta

    def update_average(self, old, new):
        if old is None:
            return new
        return old * self.beta + (1 - self.beta) * new


def is_empty(t):
    if isinstance(t, torch.Tensor):
        return t.nelement() == 0
    return t is None


class StyleGAN2(nn.Module):
    def __init__(self, latent_dim=8, image_size=4):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(latent_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, image_size * image_size))
        self.D = nn.Sequential(nn.Linear(image_size * image_size, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.G_opt = torch.optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.9))
        self.D_opt = torch.optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.9))


class Trainer():
    def __init__(self, batch_size=4, latent_dim=8):
        self.GAN = StyleGAN2(latent_dim)
        self.batch_size = batch_size
        self.latent_dim = latent_dim
        self.steps = 0
        self.pl_mean = torch.empty(1)  # expect: AG012
        self.pl_length_ma = EMA(0.99)
        self.d_loss = 0
        self.g_loss = 0

    def train(self, image_batch):
        apply_path_penalty = self.steps % 2 == 0

        self.GAN.D_opt.zero_grad()
        w_styles = torch.randn(self.batch_size, self.latent_dim)
        generated_images = self.GAN.G(w_styles)
        fake_output = self.GAN.D(generated_images.clone().detach())
        real_output = self.GAN.D(image_batch)
        disc_loss = (F.relu(1 + real_output) + F.relu(1 - fake_output)).mean()
        disc_loss.backward()
        self.d_loss = disc_loss.item()
        self.GAN.D_opt.step()

        self.GAN.G_opt.zero_grad()
        w_styles = torch.randn(self.batch_size, self.latent_dim)
        generated_images = self.GAN.G(w_styles)
        gen_loss = self.GAN.D(generated_images).mean()
        avg_pl_length = self.pl_mean
        if apply_path_penalty:
            std = 0.1 / (w_styles.std(dim=0, keepdim=True) + EPS)
            w_styles_2 = w_styles + torch.randn(w_styles.shape) / (std + EPS)
            pl_images = self.GAN.G(w_styles_2)
            pl_lengths = ((pl_images - generated_images) ** 2).mean(dim=1)
            avg_pl_length = pl_lengths.detach().mean()
            if not is_empty(self.pl_mean):
                pl_loss = ((pl_lengths - self.pl_mean) ** 2).mean()
                if not torch.isnan(pl_loss):
                    gen_loss = gen_loss + pl_loss
        gen_loss.backward()
        self.g_loss = gen_loss.item()
        self.GAN.G_opt.step()

        if apply_path_penalty and not torch.isnan(avg_pl_length):
            self.pl_mean = self.pl_length_ma.update_average(self.pl_mean, avg_pl_length)
        self.steps += 1

    def print_log(self):
        print(f"G: {self.g_loss:.2f} | D: {self.d_loss:.2f} | PL: {float(self.pl_mean):.2f}")


trainer = Trainer()
for _ in range(4):
    trainer.train(torch.rand(4, 16))
trainer.print_log()
