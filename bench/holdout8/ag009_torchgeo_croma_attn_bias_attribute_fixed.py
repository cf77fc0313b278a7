# source: https://github.com/torchgeo/torchgeo/pull/3232
# symptom: attn_bias follows the model to another device: False
"""torchgeo CROMA: `self.attn_bias = get_2dalibi(...)` is a plain tensor attribute of the module, so
`model.to(device)` leaves the 2-D ALiBi attention bias behind (device mismatch on the GPU); the pull
request registers it as a buffer.

Written for bench/holdout8 with the structure of CROMA (get_2dalibi, ViT with a linear patch input and
a transformer whose attention adds the relative position bias, GAP-FFN head), a small optical-only
model trained for a few steps on random 12-band 16x16 images. CPU torch has no second device, so the
move is stood in for by model.to("meta"), and the program prints whether the bias followed.

Twin: the pull request's fix: attn_bias is registered as a buffer.
"""
import itertools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_2dalibi(num_heads, num_patches):
    points = list(itertools.product(range(int(math.sqrt(num_patches))), range(int(math.sqrt(num_patches)))))

    def get_slopes(n):
        def get_slopes_power_of_2(n):
            start = 2 ** (-2 ** -(math.log2(n) - 3))
            ratio = start
            return [start * ratio ** i for i in range(n)]

        if math.log2(n).is_integer():
            return get_slopes_power_of_2(n)
        closest_power_of_2 = 2 ** math.floor(math.log2(n))
        return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2]

    slopes = torch.tensor(get_slopes(num_heads)).unsqueeze(1)
    idxs = []
    for p1 in points:
        for p2 in points:
            dist = math.sqrt((p1[0] - p2[0]) ** 2 + (p1[1] - p2[1]) ** 2)
            idxs.append(dist * slopes * -1)
    all_bias = torch.cat(idxs, dim=1)
    return all_bias.view(1, num_heads, num_patches, num_patches)


class FFN(nn.Module):
    def __init__(self, dim, mult=4, dropout=0.0):
        super().__init__()
        inner_dim = int(dim * mult)
        self.net = nn.Sequential(nn.Linear(dim, inner_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(inner_dim, dim))
        self.input_norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.net(self.input_norm(x))


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, dropout=0.0):
        super().__init__()
        self.num_heads = num_heads
        dim_head = int(dim / num_heads)
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.input_norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, relative_position_bias):
        x = self.input_norm(x)
        b, n, _ = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.num_heads, -1).transpose(1, 2) for t in (q, k, v))
        attention_scores = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        attention_scores = attention_scores + relative_position_bias
        attn = self.dropout(attention_scores.softmax(dim=-1))
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, -1))


class BaseTransformer(nn.Module):
    def __init__(self, dim, depth, num_heads=8, attn_dropout=0.0, ff_dropout=0.0, ff_mult=4, final_norm=True):
        super().__init__()
        self.final_norm = final_norm
        self.layers = nn.ModuleList([
            nn.ModuleList([Attention(dim=dim, num_heads=num_heads, dropout=attn_dropout),
                           FFN(dim=dim, mult=ff_mult, dropout=ff_dropout)]) for _ in range(depth)])
        if self.final_norm:
            self.norm_out = nn.LayerNorm(dim)

    def forward(self, x, relative_position_bias):
        for self_attn, ffn in self.layers:
            x = self_attn(x, relative_position_bias) + x
            x = ffn(x) + x
        return self.norm_out(x) if self.final_norm else x


class ViT(nn.Module):
    def __init__(self, dim, depth, in_channels, patch_size=8):
        super().__init__()
        self.patch_size = patch_size
        self.linear_input = nn.Linear(in_channels * patch_size ** 2, dim)
        self.transformer = BaseTransformer(dim=dim, depth=depth, num_heads=4)

    def forward(self, imgs, attn_bias):
        b, c, h, w = imgs.shape
        p = self.patch_size
        x = imgs.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5).reshape(b, (h // p) * (w // p), c * p * p)
        x = self.linear_input(x)
        return self.transformer(x, relative_position_bias=attn_bias)


class CROMA(nn.Module):
    def __init__(self, encoder_dim=32, encoder_depth=2, num_heads=4, patch_size=8, image_size=16, num_classes=3):
        super().__init__()
        self.encoder_dim = encoder_dim
        self.num_heads = num_heads
        self.patch_size = patch_size
        self.num_patches = int((image_size / 8) ** 2)
        self.s2_channels = 12
        self.register_buffer("attn_bias", get_2dalibi(num_heads=self.num_heads, num_patches=self.num_patches))
        self.s2_encoder = ViT(dim=self.encoder_dim, depth=encoder_depth, in_channels=self.s2_channels)
        self.GAP_FFN_s2 = nn.Sequential(nn.LayerNorm(self.encoder_dim), nn.Linear(self.encoder_dim, 4 * self.encoder_dim),
                                        nn.GELU(), nn.Linear(4 * self.encoder_dim, self.encoder_dim))
        self.head = nn.Linear(self.encoder_dim, num_classes)

    def forward(self, optical_images):
        optical_encodings = self.s2_encoder(imgs=optical_images, attn_bias=self.attn_bias)
        optical_gap = self.GAP_FFN_s2(optical_encodings.mean(dim=1))
        return self.head(optical_gap)


def main():
    torch.manual_seed(0)
    model = CROMA()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        images = torch.randn(4, 12, 16, 16)
        labels = torch.randint(0, 3, (4,))
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")

    model = model.to("meta")
    print("attn_bias follows the model to another device:", model.attn_bias.device == torch.device("meta"))


if __name__ == "__main__":
    main()
