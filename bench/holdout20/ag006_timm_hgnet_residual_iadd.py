# source: https://github.com/huggingface/pytorch-image-models/commit/6862c9850a4a7577ed7227f850c83153f328a066
# symptom: modified by an inplace operation
"""timm hgnet (PP-HGNetV2 layout, `agg='se'`, no learnable affine blocks): training a small classifier.

`HGBlock.forward` ends with `x = self.aggregation(x)` and, for residual blocks, `x += identity`. With the 'se'
aggregation the last module is a `ConvBNAct` whose ReLU output autograd saved for its backward, so the in-place
add on it fails at `loss.backward()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LearnableAffineBlock(nn.Module):
    def __init__(self, scale_value=1.0, bias_value=0.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([scale_value]))
        self.bias = nn.Parameter(torch.tensor([bias_value]))

    def forward(self, x):
        return self.scale * x + self.bias


class ConvBNAct(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, groups=1, use_act=True, use_lab=False):
        super().__init__()
        self.use_act = use_act
        self.use_lab = use_lab
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride,
                              padding=(kernel_size - 1) // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.ReLU() if self.use_act else nn.Identity()
        self.lab = LearnableAffineBlock() if (self.use_act and self.use_lab) else nn.Identity()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.act(x)
        x = self.lab(x)
        return x


class ESEModule(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        identity = x
        x = x.mean((2, 3), keepdim=True)
        x = self.sigmoid(self.conv(x))
        return torch.mul(identity, x)


class HGBlock(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, layer_num, kernel_size=3,
                 residual=False, use_lab=False, agg='ese'):
        super().__init__()
        self.residual = residual
        self.layers = nn.ModuleList()
        for i in range(layer_num):
            self.layers.append(ConvBNAct(in_channels if i == 0 else mid_channels, mid_channels,
                                         kernel_size, use_lab=use_lab))
        total_channels = in_channels + layer_num * mid_channels
        if agg == 'se':
            self.aggregation = nn.Sequential(
                ConvBNAct(total_channels, out_channels // 2, 1, use_lab=use_lab),
                ConvBNAct(out_channels // 2, out_channels, 1, use_lab=use_lab))
        else:
            self.aggregation = nn.Sequential(
                ConvBNAct(total_channels, out_channels, 1, use_lab=use_lab),
                ESEModule(out_channels))

    def forward(self, x):
        identity = x
        output = [x]
        for layer in self.layers:
            x = layer(x)
            output.append(x)
        x = torch.cat(output, dim=1)
        x = self.aggregation(x)
        if self.residual:
            x += identity  # expect: AG006
        return x


class HGStage(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, block_num, layer_num, downsample=True,
                 use_lab=False, agg='se'):
        super().__init__()
        self.downsample = (ConvBNAct(in_channels, in_channels, 3, stride=2, groups=in_channels, use_act=False)
                           if downsample else nn.Identity())
        blocks = []
        for i in range(block_num):
            blocks.append(HGBlock(in_channels if i == 0 else out_channels, mid_channels, out_channels, layer_num,
                                  residual=False if i == 0 else True, use_lab=use_lab, agg=agg))
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x):
        return self.blocks(self.downsample(x))


class TinyHGNetV2(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = ConvBNAct(3, 16, 3, stride=2)
        self.stages = nn.Sequential(
            HGStage(16, 16, 32, block_num=2, layer_num=2, downsample=False),
            HGStage(32, 24, 48, block_num=2, layer_num=2),
        )
        self.head = nn.Linear(48, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(x.mean((2, 3)))


model = TinyHGNetV2()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(16, 3, 32, 32)
labels = torch.randint(0, 10, (16,))

model.train()
for epoch in range(3):
    optimizer.zero_grad()
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
