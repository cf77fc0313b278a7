# source: https://github.com/Tencent-Hunyuan/Hunyuan3D-2/issues/270 (pattern: texture-paint pipeline's turbo mode builds its denoising timestep schedule with torch.range, which warns on every generation)
# symptom: torch\.range is deprecated
"""Toy few-step denoising pipeline: a turbo schedule of timesteps picked with torch.range."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 32), nn.SiLU(), nn.Linear(32, dim))

    def forward(self, x, t):
        t = t.float().view(-1, 1).expand(x.shape[0], 1) / 30.0
        return self.net(torch.cat([x, t], dim=1))


class PaintPipeline:
    def __init__(self, unet, num_train_steps=30):
        self.unet = unet
        self.num_train_steps = num_train_steps
        self.alphas = torch.linspace(0.99, 0.5, num_train_steps)

    def set_turbo_timesteps(self, bsz):
        self.timesteps = torch.range(29, 0, -bsz).long()  # expect: AG011

    @torch.no_grad()
    def __call__(self, latents, bsz=3):
        self.set_turbo_timesteps(bsz)
        for t in self.timesteps:
            eps = self.unet(latents, t)
            a = self.alphas[t]
            latents = (latents - (1 - a).sqrt() * eps) / a.sqrt()
        return latents


pipe = PaintPipeline(Denoiser())
out = pipe(torch.randn(4, 16))
print("timesteps:", pipe.timesteps.tolist())
print("output norm:", round(out.norm().item(), 3))
