# source: https://github.com/buggyyang/CDC_compression/issues/1
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""buggyyang/CDC_compression after commit 538f0f4: ResnetBlock.forward adds the time embedding out of
place, `h = h + self.mlp(time_emb)[:, :, None, None]`, so the ReLU output saved for backward is left intact."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def exists(x):
    return x is not None


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=x.device) * -emb)
        emb = x[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

    def forward(self, x):
        var = torch.var(x, dim=1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


class Block(nn.Module):
    def __init__(self, dim, dim_out, large=False):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim_out, 7 if large else 3, padding=3 if large else 1),
            LayerNorm(dim_out),
            nn.ReLU(),
        )

    def forward(self, x):
        return self.block(x)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_emb_dim=None, large=False):
        super().__init__()
        self.mlp = (
            nn.Sequential(nn.LeakyReLU(0.2), nn.Linear(time_emb_dim, dim_out))
            if exists(time_emb_dim)
            else None
        )
        self.block1 = Block(dim, dim_out, large)
        self.block2 = Block(dim_out, dim_out)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        h = self.block1(x)
        if exists(time_emb):
            h = h + self.mlp(time_emb)[:, :, None, None]
        h = self.block2(h)
        return h + self.res_conv(x)


class Unet(nn.Module):
    def __init__(self, dim=8, channels=3, dim_mults=(1, 2)):
        super().__init__()
        dims = [channels, *map(lambda m: dim * m, dim_mults)]
        in_out = list(zip(dims[:-1], dims[1:]))
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim * 4),
                                      nn.LeakyReLU(0.2), nn.Linear(dim * 4, dim))
        self.downs = nn.ModuleList([])
        self.ups = nn.ModuleList([])
        for ind, (dim_in, dim_out) in enumerate(in_out):
            is_last = ind == len(in_out) - 1
            self.downs.append(nn.ModuleList([
                ResnetBlock(dim_in, dim_out, time_emb_dim=dim, large=(ind == 0)),
                ResnetBlock(dim_out, dim_out, time_emb_dim=dim),
                nn.Conv2d(dim_out, dim_out, 3, 2, 1) if not is_last else nn.Identity(),
            ]))
        for ind, (dim_in, dim_out) in enumerate(reversed(in_out[1:])):
            self.ups.append(nn.ModuleList([
                ResnetBlock(dim_out * 2, dim_in, time_emb_dim=dim),
                ResnetBlock(dim_in, dim_in, time_emb_dim=dim),
                nn.ConvTranspose2d(dim_in, dim_in, 4, 2, 1),
            ]))
        self.final_conv = nn.Sequential(LayerNorm(dim), nn.Conv2d(dim, channels, 7, padding=3))

    def forward(self, x, time):
        t = self.time_mlp(time)
        h = []
        for resnet, resnet2, downsample in self.downs:
            x = resnet(x, t)
            x = resnet2(x, t)
            h.append(x)
            x = downsample(x)
        for resnet, resnet2, upsample in self.ups:
            x = torch.cat((x, h.pop()), dim=1)
            x = resnet(x, t)
            x = resnet2(x, t)
            x = upsample(x)
        return self.final_conv(x)


class GaussianDiffusion(nn.Module):
    def __init__(self, denoise_fn, num_timesteps=100):
        super().__init__()
        self.denoise_fn = denoise_fn
        self.num_timesteps = num_timesteps
        betas = torch.linspace(1e-4, 2e-2, num_timesteps)
        self.register_buffer("alphas_cumprod", torch.cumprod(1.0 - betas, dim=0))

    def p_losses(self, x_start, t):
        noise = torch.randn_like(x_start)
        a = self.alphas_cumprod[t][:, None, None, None]
        x_noisy = a.sqrt() * x_start + (1 - a).sqrt() * noise
        fx = self.denoise_fn(x_noisy, t.float() / self.num_timesteps)
        return F.mse_loss(fx, noise)

    def forward(self, images):
        t = torch.randint(0, self.num_timesteps, (images.shape[0],))
        return self.p_losses(images, t)


def main():
    torch.manual_seed(0)
    model = GaussianDiffusion(Unet(dim=8, channels=3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for step in range(2):
        images = torch.rand(2, 3, 16, 16) * 2 - 1
        optimizer.zero_grad()
        loss = model(images)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
