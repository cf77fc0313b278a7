# source: written for holdout28 (pattern: CLIP-style contrastive module creates its learnable logit scale with nn.Parameter(..., require_grad=True), a misspelled keyword)
# symptom: unexpected keyword argument 'require_grad'
"""Two-tower (CLIP-style) contrastive alignment of paired "image" and "text"
features with a learnable temperature.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoTower(nn.Module):
    def __init__(self, d_img=20, d_txt=12, d=16):
        super().__init__()
        self.img_proj = nn.Sequential(nn.Linear(d_img, 32), nn.ReLU(), nn.Linear(32, d))
        self.txt_proj = nn.Sequential(nn.Linear(d_txt, 32), nn.ReLU(), nn.Linear(32, d))
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)), require_grad=True)  # expect: AG018

    def forward(self, img, txt):
        zi = F.normalize(self.img_proj(img), dim=-1)
        zt = F.normalize(self.txt_proj(txt), dim=-1)
        return self.logit_scale.clamp(max=math.log(100)).exp() * zi @ zt.t()


def clip_loss(logits):
    labels = torch.arange(logits.shape[0])
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))


def make_pairs(n=256):
    concept = torch.randn(n, 6)
    return concept @ torch.randn(6, 20), concept @ torch.randn(6, 12) + 0.1 * torch.randn(n, 12)


def main():
    torch.manual_seed(0)
    img, txt = make_pairs()
    model = TwoTower()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for epoch in range(4):
        perm = torch.randperm(len(img))
        for i in range(0, len(img), 64):
            idx = perm[i:i + 64]
            loss = clip_loss(model(img[idx], txt[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f} scale {model.logit_scale.exp().item():.2f}")


if __name__ == "__main__":
    main()
