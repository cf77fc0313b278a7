# source: https://github.com/Clay-foundation/model/pull/95 (pattern: Clay MAE encoder builds its fixed sin-cos pos_encoding and band_encoding in __init__ as plain tensor attributes; moving the model leaves them behind)
# symptom: encodings left behind by \.to\(\): True
"""Clay-style encoder: patch embeddings plus fixed position and band-group encodings.

Fixed: both fixed encodings are registered as non-persistent buffers, so .to() moves them with the
model (and the checkpoint format does not change).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def posemb_sincos_2d(h, w, dim, temperature=10000):
    y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    omega = torch.arange(dim // 4) / (dim // 4 - 1)
    omega = 1.0 / (temperature ** omega)
    y = y.flatten()[:, None] * omega[None, :]
    x = x.flatten()[:, None] * omega[None, :]
    return torch.cat((x.sin(), x.cos(), y.sin(), y.cos()), dim=1)


def posemb_sincos_1d(length, dim, temperature=10000):
    pos = torch.arange(length)
    omega = torch.arange(dim // 2) / (dim // 2 - 1)
    omega = 1.0 / (temperature ** omega)
    scaled = pos[:, None] * omega[None, :]
    return torch.cat((scaled.sin(), scaled.cos()), dim=1)


class Encoder(nn.Module):
    def __init__(self, image_size=16, patch_size=4, band_groups=3, dim=32):
        super().__init__()
        self.patch_size = patch_size
        self.num_patches = (image_size // patch_size) ** 2
        self.band_groups = band_groups
        self.to_patch_embed = nn.Linear(patch_size * patch_size, dim)
        side = image_size // patch_size
        self.register_buffer("pos_encoding", posemb_sincos_2d(side, side, dim // 2), persistent=False)
        self.register_buffer("band_encoding", posemb_sincos_1d(band_groups, dim // 2), persistent=False)

    def forward(self, cube):
        B, G, H, W = cube.shape
        p = self.patch_size
        patches = cube.unfold(2, p, p).unfold(3, p, p).reshape(B, G, -1, p * p)
        patches = self.to_patch_embed(patches)  # [B G L D]
        pos = self.pos_encoding.unsqueeze(0).expand(G, -1, -1)  # [G L D/2]
        band = self.band_encoding.unsqueeze(1).expand(-1, self.num_patches, -1)  # [G L D/2]
        encoding = torch.cat((pos, band), dim=-1)
        return patches + encoding


model = Encoder()
cube = torch.randn(2, 3, 16, 16)
print("float32 forward:", tuple(model(cube).shape))

model = model.to(torch.float64)  # stands in for .to("cuda") on a CPU-only machine
out = model(cube.double())
left = [n for n in ("pos_encoding", "band_encoding") if getattr(model, n).dtype != torch.float64]
print("weight dtype:", model.to_patch_embed.weight.dtype, "| not moved:", left)
print("encodings left behind by .to():", bool(left))
print("in state_dict:", [k for k in model.state_dict() if "encoding" in k])
