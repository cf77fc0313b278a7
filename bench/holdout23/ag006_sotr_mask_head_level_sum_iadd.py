# source: https://github.com/easton-cau/SOTR/issues/19
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""easton-cau/SOTR (#19): MaskHead.forward starts from `feature_add_all_level = self.convs_all_levels[0](features[0])`,
whose last layer is `nn.ReLU(inplace=False)`, and sums the other FPN levels into it with
`feature_add_all_level += self.convs_all_levels[i](mask_feat)`; ReLU saved that output for backward, so
training raises at `loss.backward()` (torch 2.x).  The fix given in the thread is the out-of-place sum.
(Stand-ins: random FPN features, a fixed set of dynamic mask kernels, a dice loss; no transformer
branch.)"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskHead(nn.Module):
    def __init__(self, cfg, num_levels):
        super().__init__()
        self.num_masks = cfg.NUM_MASKS
        self.mask_in_channels = cfg.MASK_IN_CHANNELS
        self.mask_channels = cfg.MASK_CHANNELS
        self.num_levels = num_levels
        norm = None if cfg.NORM == "none" else cfg.NORM

        self.convs_all_levels = nn.ModuleList()
        for i in range(self.num_levels):
            convs_per_level = nn.Sequential()
            if i == 0:
                conv_tower = [nn.Conv2d(self.mask_in_channels, self.mask_channels,
                                        kernel_size=3, stride=1, padding=1, bias=norm is None)]
                if norm == "GN":
                    conv_tower.append(nn.GroupNorm(32, self.mask_channels))
                conv_tower.append(nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(i), nn.Sequential(*conv_tower))
                self.convs_all_levels.append(convs_per_level)
                continue
            for j in range(i):
                chn = self.mask_in_channels if j == 0 else self.mask_channels
                conv_tower = [nn.Conv2d(chn, self.mask_channels,
                                        kernel_size=3, stride=1, padding=1, bias=norm is None)]
                if norm == "GN":
                    conv_tower.append(nn.GroupNorm(32, self.mask_channels))
                conv_tower.append(nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(j), nn.Sequential(*conv_tower))
                convs_per_level.add_module('upsample' + str(j), nn.Upsample(
                    scale_factor=2, mode='bilinear', align_corners=False))
            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = nn.Sequential(
            nn.Conv2d(self.mask_channels, self.num_masks, kernel_size=1, stride=1,
                      padding=0, bias=norm is None),
            nn.GroupNorm(32, self.num_masks),
            nn.ReLU(inplace=True),
        )
        for modules in [self.convs_all_levels, self.conv_pred]:
            for l in modules.modules():
                if isinstance(l, nn.Conv2d):
                    torch.nn.init.normal_(l.weight, std=0.01)
                    if l.bias is not None:
                        nn.init.constant_(l.bias, 0)

    def forward(self, features):
        assert len(features) == self.num_levels
        feature_add_all_level = self.convs_all_levels[0](features[0])
        for i in range(1, self.num_levels):
            mask_feat = features[i]
            feature_add_all_level += self.convs_all_levels[i](mask_feat)  # expect: AG006
        mask_pred = self.conv_pred(feature_add_all_level)
        return mask_pred


def dice_loss(input, target):
    input = input.contiguous().view(input.size(0), -1)
    target = target.contiguous().view(target.size(0), -1).float()
    a = torch.sum(input * target, 1)
    b = torch.sum(input * input, 1) + 0.001
    c = torch.sum(target * target, 1) + 0.001
    d = (2 * a) / (b + c)
    return 1 - d


def main():
    torch.manual_seed(0)
    cfg = SimpleNamespace(NUM_MASKS=32, MASK_IN_CHANNELS=16, MASK_CHANNELS=32, NORM="GN")
    head = MaskHead(cfg, num_levels=4)
    kernel_pred = nn.Linear(16, cfg.NUM_MASKS)      # stand-in for the dynamic kernel branch
    optimizer = torch.optim.SGD(list(head.parameters()) + list(kernel_pred.parameters()), lr=0.01)
    for step in range(2):
        features = [torch.randn(2, 16, 32 // 2 ** i, 32 // 2 ** i) for i in range(4)]
        gt_masks = (torch.rand(2, 3, 32, 32) > 0.5)
        inst_emb = torch.randn(2, 3, 16)
        optimizer.zero_grad()
        mask_feat = head(features)                                  # [N, E, H, W]
        kernels = kernel_pred(inst_emb)                             # [N, I, E]
        ins_pred = torch.einsum("nie,nehw->nihw", kernels, mask_feat).sigmoid()
        loss = dice_loss(ins_pred.flatten(0, 1), gt_masks.flatten(0, 1)).mean()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
