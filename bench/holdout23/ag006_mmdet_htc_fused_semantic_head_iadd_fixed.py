# source: https://github.com/open-mmlab/mmdetection/pull/8083
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""open-mmlab/mmdetection FusedSemanticHead with the fix of pull request #8083: the other FPN levels are
summed out of place, `x = x + self.lateral_convs[i](feat)`, so the ReLU output of the fusion level's
lateral conv saved for backward is left intact."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    """conv -> (norm) -> ReLU, as mmcv builds it by default."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0,
                 conv_cfg=None, norm_cfg=None, inplace=True):
        super().__init__()
        with_norm = norm_cfg is not None
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                              padding=padding, bias=not with_norm)
        self.norm = nn.GroupNorm(8, out_channels) if with_norm else None
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        return self.activate(x)


class FusedSemanticHead(nn.Module):
    r"""Multi-level fused semantic segmentation head.

    in_1 -> 1x1 conv ---
                        |
    in_2 -> 1x1 conv -- |
                       ||
    in_3 -> 1x1 conv - ||
                      |||                  /-> 1x1 conv (mask prediction)
    in_4 -> 1x1 conv -----> 3x3 convs (*4)
                        |                  \-> 1x1 conv (feature)
    in_5 -> 1x1 conv ---
    """

    def __init__(self, num_ins, fusion_level, num_convs=4, in_channels=256,
                 conv_out_channels=256, num_classes=183, conv_cfg=None,
                 norm_cfg=None, ignore_label=255, loss_weight=0.2):
        super().__init__()
        self.num_ins = num_ins
        self.fusion_level = fusion_level
        self.num_convs = num_convs
        self.in_channels = in_channels
        self.conv_out_channels = conv_out_channels
        self.num_classes = num_classes
        self.loss_weight = loss_weight

        self.lateral_convs = nn.ModuleList()
        for i in range(self.num_ins):
            self.lateral_convs.append(
                ConvModule(self.in_channels, self.in_channels, 1,
                           conv_cfg=conv_cfg, norm_cfg=norm_cfg, inplace=False))

        self.convs = nn.ModuleList()
        for i in range(self.num_convs):
            in_channels = self.in_channels if i == 0 else conv_out_channels
            self.convs.append(
                ConvModule(in_channels, conv_out_channels, 3, padding=1,
                           conv_cfg=conv_cfg, norm_cfg=norm_cfg))
        self.conv_embedding = ConvModule(conv_out_channels, conv_out_channels, 1,
                                         conv_cfg=conv_cfg, norm_cfg=norm_cfg)
        self.conv_logits = nn.Conv2d(conv_out_channels, self.num_classes, 1)
        self.criterion = nn.CrossEntropyLoss(ignore_index=ignore_label)

    def forward(self, feats):
        x = self.lateral_convs[self.fusion_level](feats[self.fusion_level])
        fused_size = tuple(x.shape[-2:])
        for i, feat in enumerate(feats):
            if i != self.fusion_level:
                feat = F.interpolate(feat, size=fused_size, mode='bilinear', align_corners=True)
                x = x + self.lateral_convs[i](feat)

        for i in range(self.num_convs):
            x = self.convs[i](x)

        mask_pred = self.conv_logits(x)
        x = self.conv_embedding(x)
        return mask_pred, x

    def loss(self, mask_pred, labels):
        labels = labels.squeeze(1).long()
        loss_semantic_seg = self.criterion(mask_pred, labels)
        return loss_semantic_seg * self.loss_weight


def main():
    torch.manual_seed(0)
    head = FusedSemanticHead(num_ins=5, fusion_level=1, num_convs=2, in_channels=16,
                             conv_out_channels=16, num_classes=8)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.02, momentum=0.9)
    for step in range(2):
        feats = [torch.randn(2, 16, 64 // 2 ** i, 64 // 2 ** i) for i in range(5)]
        gt_semantic_seg = torch.randint(0, 8, (2, 1, 32, 32))
        optimizer.zero_grad()
        semantic_pred, semantic_feat = head(feats)
        loss_seg = head.loss(semantic_pred, gt_semantic_seg)
        loss = loss_seg + 0.0 * semantic_feat.mean()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss_semantic_seg {loss_seg.item():.4f}")


if __name__ == "__main__":
    main()
