# source: https://github.com/Lightning-AI/torchmetrics/pull/1288
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Lightning-AI/torchmetrics (pull request #1288, "Fix inplace operation in `pairwise_cosine_similarity`"):
the helper `_pairwise_cosine_similarity_update` normalises its inputs with
`norm = torch.norm(x, p=2, dim=1)` and then `x /= norm.unsqueeze(1)` (and the same for y); torch.norm
saved x for backward, so using `pairwise_cosine_similarity` on model outputs inside a loss raises at
`loss.backward()`.  (Stand-ins: a two-tower text/image embedding model on random features trained with
a CLIP-style cross-entropy over the similarity matrix.)"""
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def _check_input(x: Tensor, y: Optional[Tensor] = None,
                 zero_diagonal: Optional[bool] = None) -> Tuple[Tensor, Tensor, bool]:
    if x.ndim != 2:
        raise ValueError(f"Expected argument `x` to be a 2D tensor of shape `[N, d]` but got {x.shape}")
    if y is not None:
        if y.ndim != 2 or y.shape[1] != x.shape[1]:
            raise ValueError("Expected argument `y` to be a 2D tensor of shape `[M, d]`")
        zero_diagonal = False if zero_diagonal is None else zero_diagonal
    else:
        y = x.clone()
        zero_diagonal = True if zero_diagonal is None else zero_diagonal
    return x, y, zero_diagonal


def _safe_matmul(x: Tensor, y: Tensor) -> Tensor:
    if x.dtype == torch.float16 or y.dtype == torch.float16:
        return (x.float() @ y.T.float()).half()
    return x @ y.T


def _reduce_distance_matrix(distmat: Tensor, reduction: Optional[str] = None) -> Tensor:
    if reduction == "mean":
        return distmat.mean(dim=-1)
    if reduction == "sum":
        return distmat.sum(dim=-1)
    if reduction is None or reduction == "none":
        return distmat
    raise ValueError(f"Expected reduction to be one of `['mean', 'sum', None]` but got {reduction}")


def _pairwise_cosine_similarity_update(x: Tensor, y: Optional[Tensor] = None,
                                       zero_diagonal: Optional[bool] = None) -> Tensor:
    x, y, zero_diagonal = _check_input(x, y, zero_diagonal)

    norm = torch.norm(x, p=2, dim=1)
    x /= norm.unsqueeze(1)  # expect: AG006
    norm = torch.norm(y, p=2, dim=1)
    y /= norm.unsqueeze(1)  # expect: AG006

    distance = _safe_matmul(x, y)
    if zero_diagonal:
        distance.fill_diagonal_(0)
    return distance


def pairwise_cosine_similarity(x: Tensor, y: Optional[Tensor] = None, reduction=None,
                               zero_diagonal: Optional[bool] = None) -> Tensor:
    distance = _pairwise_cosine_similarity_update(x, y, zero_diagonal)
    return _reduce_distance_matrix(distance, reduction)


class TwoTower(nn.Module):
    def __init__(self, d_text=24, d_image=40, d_emb=16):
        super().__init__()
        self.text = nn.Sequential(nn.Linear(d_text, 32), nn.GELU(), nn.Linear(32, d_emb))
        self.image = nn.Sequential(nn.Linear(d_image, 32), nn.GELU(), nn.Linear(32, d_emb))
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, text, image):
        return self.text(text), self.image(image)


def contrastive_loss(text_emb, image_emb, logit_scale):
    sim = pairwise_cosine_similarity(text_emb, image_emb) * logit_scale.exp()
    targets = torch.arange(sim.size(0))
    return (F.cross_entropy(sim, targets) + F.cross_entropy(sim.T, targets)) / 2


def main():
    torch.manual_seed(0)
    model = TwoTower()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        text, image = torch.randn(16, 24), torch.randn(16, 40)
        optimizer.zero_grad()
        text_emb, image_emb = model(text, image)
        loss = contrastive_loss(text_emb, image_emb, model.logit_scale)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
