import torch.nn as nn

from . import functional as F


class DiceLoss(nn.Module):
    """Dice loss with the `threshold` parameter the pull request added."""

    def __init__(self, eps=1.0, beta=1.0, activation=None, threshold=None, ignore_channels=None):
        super().__init__()
        self.eps = eps
        self.beta = beta
        self.activation = nn.Sigmoid() if activation == "sigmoid" else nn.Identity()
        self.threshold = threshold
        self.ignore_channels = ignore_channels

    def forward(self, y_pr, y_gt):
        y_pr = self.activation(y_pr)
        return 1 - F.f_score(y_pr, y_gt, beta=self.beta, eps=self.eps,
                             threshold=self.threshold, ignore_channels=self.ignore_channels)
