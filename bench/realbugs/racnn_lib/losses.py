"""RA-CNN's pairwise ranking loss between the scale-1 and scale-2 class probabilities (helper for ag005_racnn_rank_loss)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RankLoss(nn.Module):
    def __init__(self, margin=0.05):
        super().__init__()
        self.margin = margin

    def forward(self, scores1, scores2, target):
        # probability of the true class at each scale, one per sample
        ps1 = F.softmax(scores1, dim=1).gather(1, target.long().view(-1, 1))
        ps2 = F.softmax(scores2, dim=1).gather(1, target.long().view(-1, 1))
        return torch.clamp(ps1 - ps2 + self.margin, min=0).view(-1)
