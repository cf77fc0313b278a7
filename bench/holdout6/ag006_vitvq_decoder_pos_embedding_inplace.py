# source: https://github.com/thuanz123/enhancing-transformers/issues/11
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Enhancing Transformers (ViT-VQGAN): `ViTDecoder.forward` starts with `token += self.de_pos_embedding`, in place
on its input. With two decoders on the same quantised code (`rec_a = decoder_a(quant)`, `rec_b = decoder_b(quant)`)
the second call adds to the `quant` that the first decoder's layers already saved for backward."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_1d_sincos_pos_embed(dim, n):
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    omega = 1.0 / 10000 ** (torch.arange(dim // 2, dtype=torch.float32) / (dim / 2))
    out = pos * omega[None]
    return torch.cat([out.sin(), out.cos()], dim=1)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.norm(x))


class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=8):
        super().__init__()
        inner = heads * dim_head
        self.heads, self.scale = heads, dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner * 3, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        attn = torch.softmax(q @ k.transpose(-1, -2) * self.scale, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class Transformer(nn.Module):
    def __init__(self, dim, depth=1, mlp_dim=32):
        super().__init__()
        self.layers = nn.ModuleList([nn.ModuleList([
            PreNorm(dim, Attention(dim)),
            PreNorm(dim, nn.Sequential(nn.Linear(dim, mlp_dim), nn.Tanh(), nn.Linear(mlp_dim, dim))),
        ]) for _ in range(depth)])

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x


class ViTEncoder(nn.Module):
    def __init__(self, image_size=16, patch_size=4, dim=16, channels=3):
        super().__init__()
        n = (image_size // patch_size) ** 2
        self.to_patch_embedding = nn.Conv2d(channels, dim, patch_size, patch_size)
        self.en_pos_embedding = nn.Parameter(get_1d_sincos_pos_embed(dim, n)[None], requires_grad=False)
        self.transformer = Transformer(dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, img):
        x = self.to_patch_embedding(img).flatten(2).transpose(1, 2)
        x = x + self.en_pos_embedding
        return self.norm(self.transformer(x))


class ViTDecoder(nn.Module):
    def __init__(self, image_size=16, patch_size=4, dim=16, channels=3):
        super().__init__()
        self.grid = image_size // patch_size
        self.transformer = Transformer(dim)
        self.de_pos_embedding = nn.Parameter(get_1d_sincos_pos_embed(dim, self.grid ** 2)[None], requires_grad=False)
        self.norm = nn.LayerNorm(dim)
        self.conv_out = nn.ConvTranspose2d(dim, channels, patch_size, patch_size)

    def forward(self, token):
        token += self.de_pos_embedding  # expect: AG006
        x = self.norm(self.transformer(token))
        x = x.transpose(1, 2).reshape(x.size(0), -1, self.grid, self.grid)
        return self.conv_out(x)


class VectorQuantizer(nn.Module):
    def __init__(self, embed_dim=16, n_embed=32, beta=0.25):
        super().__init__()
        self.embedding = nn.Embedding(n_embed, embed_dim)
        self.beta = beta

    def forward(self, z):
        z_norm = F.normalize(z, dim=-1)
        codebook = F.normalize(self.embedding.weight, dim=-1)
        idx = (z_norm @ codebook.t()).argmax(dim=-1)
        z_q = codebook[idx]
        loss = self.beta * ((z_q.detach() - z_norm) ** 2).mean() + ((z_q - z_norm.detach()) ** 2).mean()
        z_q = z_norm + (z_q - z_norm).detach()
        return z_q, loss, idx


class TwoHeadViTVQ(nn.Module):
    """One encoder and quantiser, two decoders reading the same code (the issue's use case)."""

    def __init__(self):
        super().__init__()
        self.encoder = ViTEncoder()
        self.quantizer = VectorQuantizer()
        self.pre_quant = nn.Linear(16, 16)
        self.decoder_a = ViTDecoder()
        self.decoder_b = ViTDecoder()

    def forward(self, x):
        quant, diff, _ = self.quantizer(self.pre_quant(self.encoder(x)))
        rec_a = self.decoder_a(quant)
        rec_b = self.decoder_b(quant)
        return rec_a, rec_b, diff


model = TwoHeadViTVQ()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    img = torch.rand(2, 3, 16, 16)
    rec_a, rec_b, diff = model(img)
    loss = F.l1_loss(rec_a, img) + F.l1_loss(rec_b, 1 - img) + diff
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
