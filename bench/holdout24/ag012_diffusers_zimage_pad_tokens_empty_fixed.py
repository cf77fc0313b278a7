# source: https://github.com/huggingface/diffusers/commit/3bc3e525fc588dca92dd49f725fa6e434748fcd6
# symptom: output has NaN: True
"""diffusers ZImageTransformer2DModel after "Initialize ZImage pad tokens deterministically (#13805)":
the caption and image pad tokens are nn.Parameter(torch.zeros((1, dim))), so a model built from its
config pads with zeros. Runs in the same deterministic mode as the bug program."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

torch.use_deterministic_algorithms(True)
SEQ_MULTI_OF = 8


class TimestepEmbedder(nn.Module):
    def __init__(self, out_size, frequency_embedding_size=32):
        super().__init__()
        self.frequency_embedding_size = frequency_embedding_size
        self.mlp = nn.Sequential(nn.Linear(frequency_embedding_size, out_size), nn.SiLU(), nn.Linear(out_size, out_size))

    def forward(self, t):
        half = self.frequency_embedding_size // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        args = t[:, None].float() * freqs[None]
        return self.mlp(torch.cat([torch.cos(args), torch.sin(args)], dim=-1))


class ZImageTransformerBlock(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, n_heads, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))
        self.adaLN = nn.Linear(dim, 2 * dim)

    def forward(self, x, attn_mask, adaln_input):
        scale, shift = self.adaLN(adaln_input).unsqueeze(1).chunk(2, dim=-1)
        h = self.norm1(x) * (1 + scale) + shift
        key_padding_mask = None if attn_mask is None else ~attn_mask
        x = x + self.attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return x + self.ff(self.norm2(x))


class ZImageTransformer2DModel(nn.Module):
    def __init__(self, in_channels=4, dim=32, n_heads=4, n_layers=2, cap_feat_dim=16, patch_size=2):
        super().__init__()
        self.patch_size = patch_size
        self.in_channels = in_channels
        self.t_embedder = TimestepEmbedder(dim)
        self.x_embedder = nn.Linear(patch_size * patch_size * in_channels, dim)
        self.cap_embedder = nn.Sequential(nn.LayerNorm(cap_feat_dim), nn.Linear(cap_feat_dim, dim))
        self.x_pad_token = nn.Parameter(torch.zeros((1, dim)))
        self.cap_pad_token = nn.Parameter(torch.zeros((1, dim)))
        self.layers = nn.ModuleList([ZImageTransformerBlock(dim, n_heads) for _ in range(n_layers)])
        self.final = nn.Linear(dim, patch_size * patch_size * in_channels)

    def _patchify_image(self, image):
        c, h, w = image.shape
        p = self.patch_size
        patches = image.view(c, h // p, p, w // p, p).permute(1, 3, 2, 4, 0).reshape(-1, p * p * c)
        return patches, (h, w)

    def _pad_with_ids(self, feat):
        ori_len = len(feat)
        pad_len = (-ori_len) % SEQ_MULTI_OF
        if pad_len > 0:
            padded_feat = torch.cat([feat, feat[-1:].repeat(pad_len, 1)], dim=0)
            pad_mask = torch.cat([torch.zeros(ori_len, dtype=torch.bool), torch.ones(pad_len, dtype=torch.bool)])
        else:
            padded_feat = feat
            pad_mask = torch.zeros(ori_len, dtype=torch.bool)
        return padded_feat, pad_mask

    def _prepare_sequence(self, feats, inner_pad_mask, pad_token):
        item_seqlens = [len(f) for f in feats]
        max_seqlen = max(item_seqlens)
        feats_cat = torch.cat(feats, dim=0)
        mask = torch.cat(inner_pad_mask).unsqueeze(-1)
        feats_cat = torch.where(mask, pad_token, feats_cat)
        feats = pad_sequence(list(feats_cat.split(item_seqlens, dim=0)), batch_first=True, padding_value=0.0)
        if all(seq == max_seqlen for seq in item_seqlens):
            attn_mask = None
        else:
            attn_mask = torch.zeros((len(item_seqlens), max_seqlen), dtype=torch.bool)
            for i, seq_len in enumerate(item_seqlens):
                attn_mask[i, :seq_len] = 1
        return feats, attn_mask, item_seqlens

    def forward(self, x, t, cap_feats):
        adaln_input = self.t_embedder(t)
        img, img_mask, sizes = [], [], []
        for image in x:
            patches, size = self._patchify_image(image)
            out, m = self._pad_with_ids(patches)
            img.append(out)
            img_mask.append(m)
            sizes.append((size, len(patches)))
        caps, cap_mask = zip(*[self._pad_with_ids(c) for c in cap_feats])
        x_seqlens = [len(i) for i in img]
        xe = self.x_embedder(torch.cat(img, 0))
        xs, x_attn, _ = self._prepare_sequence(list(xe.split(x_seqlens, 0)), img_mask, self.x_pad_token)
        cap_seqlens = [len(c) for c in caps]
        ce = self.cap_embedder(torch.cat(caps, 0))
        cs, c_attn, _ = self._prepare_sequence(list(ce.split(cap_seqlens, 0)), list(cap_mask), self.cap_pad_token)
        unified = torch.cat([xs, cs], dim=1)
        mask = None
        if x_attn is not None or c_attn is not None:
            xa = x_attn if x_attn is not None else torch.ones(xs.shape[:2], dtype=torch.bool)
            ca = c_attn if c_attn is not None else torch.ones(cs.shape[:2], dtype=torch.bool)
            mask = torch.cat([xa, ca], dim=1)
        for layer in self.layers:
            unified = layer(unified, mask, adaln_input)
        out = self.final(unified[:, : xs.shape[1]])
        p, c = self.patch_size, self.in_channels
        images = []
        for i, ((h, w), n) in enumerate(sizes):
            o = out[i, :n].view(h // p, w // p, p, p, c).permute(4, 0, 2, 1, 3).reshape(c, h, w)
            images.append(o)
        return images


def main():
    torch.manual_seed(0)
    # built from its config, as in the pipeline tests (no pretrained weights loaded)
    model = ZImageTransformer2DModel()
    latents = [torch.randn(4, 6, 6), torch.randn(4, 6, 6)]  # 9 patches each: padded to 16
    captions = [torch.randn(5, 16), torch.randn(8, 16)]  # the first caption is padded
    t = torch.tensor([0.3, 0.7])
    with torch.no_grad():
        out = model(latents, t, captions)
    print("output shapes", [tuple(o.shape) for o in out])
    print(f"output has NaN: {any(torch.isnan(o).any().item() for o in out)}")


if __name__ == "__main__":
    main()
