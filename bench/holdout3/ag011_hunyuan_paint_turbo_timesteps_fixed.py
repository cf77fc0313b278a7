# source: https://github.com/Tencent-Hunyuan/Hunyuan3D-2/pull/375
# symptom: torch\.range is deprecated
# Clean twin: torch.arange(29, -1, -bsz, ...), the PR's fix (same values).
import warnings

import torch

warnings.simplefilter("always")


class HunyuanPaintPipeline:
    def __init__(self, device="cpu", turbo=True):
        self.device = device
        self.turbo = turbo

    def prepare_timesteps(self, num_in_batch):
        bsz = 3
        if self.turbo:
            timesteps = torch.arange(29, -1, -bsz, device=self.device).long()
            timesteps = timesteps.repeat_interleave(num_in_batch)
        else:
            timesteps = torch.arange(999, -1, -100, device=self.device).repeat_interleave(num_in_batch)
        return timesteps

    def __call__(self, images, num_in_batch=2):
        timesteps = self.prepare_timesteps(num_in_batch)
        latents = torch.randn(len(images) * num_in_batch, 4, 8, 8)
        for t in timesteps.unique().flip(0):
            latents = latents * (1 - 0.01 * (t.float() / 30))
        return latents, timesteps


pipeline = HunyuanPaintPipeline()
latents, timesteps = pipeline([torch.rand(3, 16, 16)])
print(timesteps.tolist())
