# source: https://github.com/open-mmlab/mmocr/pull/884
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""mmocr `FPEM_FFM` neck (PANet/PSENet): over the FPEM repeats, the first repeat's outputs become the fused
maps (`c2_ffm = c2`) and later repeats are added with `c2_ffm += c2` ... `c5_ffm += c5`; each first-repeat
output is the output of a SeparableConv2d's ReLU, which autograd saved, so training fails in backward
(issues #878 and #648). Written for this set with the neck's structure (reduce convs, FPEM up/down
upsample-add passes through SeparableConv2d blocks, the FFM interpolation and concat) on a tiny backbone
and a PAN-like text-map head; random images and kernels."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SeparableConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.depthwise_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1, stride=stride, groups=in_channels)
        self.pointwise_conv = nn.Conv2d(in_channels, out_channels, 1)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.ReLU()

    def forward(self, x):
        x = self.depthwise_conv(x)
        x = self.pointwise_conv(x)
        x = self.bn(x)
        return self.act(x)


class FPEM(nn.Module):
    def __init__(self, in_channels=16):
        super().__init__()
        self.up_add1 = SeparableConv2d(in_channels, in_channels, 1)
        self.up_add2 = SeparableConv2d(in_channels, in_channels, 1)
        self.up_add3 = SeparableConv2d(in_channels, in_channels, 1)
        self.down_add1 = SeparableConv2d(in_channels, in_channels, 2)
        self.down_add2 = SeparableConv2d(in_channels, in_channels, 2)
        self.down_add3 = SeparableConv2d(in_channels, in_channels, 2)

    def forward(self, c2, c3, c4, c5):
        # upsample
        c4 = self.up_add1(self._upsample_add(c5, c4))
        c3 = self.up_add2(self._upsample_add(c4, c3))
        c2 = self.up_add3(self._upsample_add(c3, c2))
        # downsample
        c3 = self.down_add1(self._upsample_add(c3, c2))
        c4 = self.down_add2(self._upsample_add(c4, c3))
        c5 = self.down_add3(self._upsample_add(c5, c4))
        return c2, c3, c4, c5

    def _upsample_add(self, x, y):
        return F.interpolate(x, size=y.size()[2:]) + y


class FPEM_FFM(nn.Module):
    def __init__(self, in_channels=(8, 16, 32, 64), conv_out=16, fpem_repeat=2, align_corners=False):
        super().__init__()
        self.reduce_conv_c2 = nn.Sequential(nn.Conv2d(in_channels[0], conv_out, 1), nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c3 = nn.Sequential(nn.Conv2d(in_channels[1], conv_out, 1), nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c4 = nn.Sequential(nn.Conv2d(in_channels[2], conv_out, 1), nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c5 = nn.Sequential(nn.Conv2d(in_channels[3], conv_out, 1), nn.BatchNorm2d(conv_out), nn.ReLU())
        self.align_corners = align_corners
        self.fpems = nn.ModuleList([FPEM(conv_out) for _ in range(fpem_repeat)])

    def forward(self, x):
        c2, c3, c4, c5 = x
        # reduce channel
        c2 = self.reduce_conv_c2(c2)
        c3 = self.reduce_conv_c3(c3)
        c4 = self.reduce_conv_c4(c4)
        c5 = self.reduce_conv_c5(c5)

        # FPEM
        for i, fpem in enumerate(self.fpems):
            c2, c3, c4, c5 = fpem(c2, c3, c4, c5)
            if i == 0:
                c2_ffm = c2
                c3_ffm = c3
                c4_ffm = c4
                c5_ffm = c5
            else:
                c2_ffm += c2  # expect: AG006
                c3_ffm += c3  # expect: AG006
                c4_ffm += c4  # expect: AG006
                c5_ffm += c5  # expect: AG006

        # FFM
        c5 = F.interpolate(c5_ffm, c2_ffm.size()[-2:], mode="bilinear", align_corners=self.align_corners)
        c4 = F.interpolate(c4_ffm, c2_ffm.size()[-2:], mode="bilinear", align_corners=self.align_corners)
        c3 = F.interpolate(c3_ffm, c2_ffm.size()[-2:], mode="bilinear", align_corners=self.align_corners)
        return tuple([c2_ffm, c3, c4, c5])


class TinyBackbone(nn.Module):
    def __init__(self, channels=(8, 16, 32, 64)):
        super().__init__()
        stages, prev = [], 3
        for i, ch in enumerate(channels):
            stride = 4 if i == 0 else 2
            stages.append(nn.Sequential(nn.Conv2d(prev, ch, 3, stride=stride, padding=1), nn.BatchNorm2d(ch), nn.ReLU()))
            prev = ch
        self.stages = nn.ModuleList(stages)

    def forward(self, x):
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return tuple(outs)


class PANet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyBackbone()
        self.neck = FPEM_FFM()
        self.out_conv = nn.Conv2d(16 * 4, 6, 1)

    def forward(self, img):
        feats = self.neck(self.backbone(img))
        return self.out_conv(torch.cat(feats, dim=1))


def main():
    torch.manual_seed(0)
    model = PANet()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, weight_decay=5e-4)
    for step in range(2):
        img = torch.randn(2, 3, 64, 64)
        gt_kernels = (torch.rand(2, 2, 16, 16) > 0.5).float()
        preds = model(img)
        loss_text = F.binary_cross_entropy_with_logits(preds[:, 0], gt_kernels[:, 0])
        loss_kernel = F.binary_cross_entropy_with_logits(preds[:, 1], gt_kernels[:, 1])
        loss = loss_text + 0.5 * loss_kernel + preds[:, 2:].pow(2).mean() * 0.25
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", round(loss.item(), 4))


if __name__ == "__main__":
    main()
