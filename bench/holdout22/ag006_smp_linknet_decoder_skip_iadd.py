# source: https://github.com/qubvel/segmentation_models.pytorch/commit/2f001bafa274bcdb2968f6961817b9d3c8cdd480
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""segmentation_models.pytorch linknet/decoder.py before the fix: `DecoderBlock.forward`
runs `x = self.block(x)`, whose last layer is `Conv2dReLU` (Conv2d, BatchNorm2d,
`nn.ReLU(inplace=True)`), and then adds the encoder skip in place, `x += skip`. The ReLU
saved its output for backward, so training the Linknet fails at `loss.backward()`.

Stand-ins: a small five-stage conv encoder instead of the torchvision ResNet encoder
(same output list `[x4, x3, x2, x1, x0]`), random images and masks.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def initialize(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)


class Conv2dReLU(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, stride=1, use_batchnorm=True):
        super().__init__()
        layers = [
            nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                      bias=not use_batchnorm),
            nn.ReLU(inplace=True),
        ]
        if use_batchnorm:
            layers.insert(1, nn.BatchNorm2d(out_channels))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x)


class TransposeX2(nn.Module):
    def __init__(self, in_channels, out_channels, use_batchnorm=True):
        super().__init__()
        layers = [
            nn.ConvTranspose2d(in_channels, out_channels, kernel_size=4, stride=2, padding=1),
            nn.ReLU(inplace=True),
        ]
        if use_batchnorm:
            layers.insert(1, nn.BatchNorm2d(out_channels))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x)


class DecoderBlock(nn.Module):
    def __init__(self, in_channels, out_channels, use_batchnorm=True):
        super().__init__()
        self.block = nn.Sequential(
            Conv2dReLU(in_channels, in_channels // 4, kernel_size=1, use_batchnorm=use_batchnorm),
            TransposeX2(in_channels // 4, in_channels // 4, use_batchnorm=use_batchnorm),
            Conv2dReLU(in_channels // 4, out_channels, kernel_size=1, use_batchnorm=use_batchnorm),
        )

    def forward(self, x):
        x, skip = x
        x = self.block(x)
        if skip is not None:
            x += skip  # expect: AG006
        return x


class LinknetDecoder(Model):
    def __init__(self, encoder_channels, prefinal_channels=32, final_channels=1, use_batchnorm=True):
        super().__init__()
        in_channels = encoder_channels
        self.layer1 = DecoderBlock(in_channels[0], in_channels[1], use_batchnorm=use_batchnorm)
        self.layer2 = DecoderBlock(in_channels[1], in_channels[2], use_batchnorm=use_batchnorm)
        self.layer3 = DecoderBlock(in_channels[2], in_channels[3], use_batchnorm=use_batchnorm)
        self.layer4 = DecoderBlock(in_channels[3], in_channels[4], use_batchnorm=use_batchnorm)
        self.layer5 = DecoderBlock(in_channels[4], prefinal_channels, use_batchnorm=use_batchnorm)
        self.final_conv = nn.Conv2d(prefinal_channels, final_channels, kernel_size=(1, 1))
        self.initialize()

    def forward(self, x):
        encoder_head = x[0]
        skips = x[1:]
        x = self.layer1([encoder_head, skips[0]])
        x = self.layer2([x, skips[1]])
        x = self.layer3([x, skips[2]])
        x = self.layer4([x, skips[3]])
        x = self.layer5([x, None])
        return self.final_conv(x)


class SmallEncoder(nn.Module):
    out_shapes = (64, 32, 16, 8, 8)

    def __init__(self):
        super().__init__()
        def stage(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False),
                                 nn.BatchNorm2d(cout), nn.ReLU())
        self.stage0 = stage(3, 8)
        self.stage1 = stage(8, 8)
        self.stage2 = stage(8, 16)
        self.stage3 = stage(16, 32)
        self.stage4 = stage(32, 64)

    def forward(self, x):
        x0 = self.stage0(x)
        x1 = self.stage1(x0)
        x2 = self.stage2(x1)
        x3 = self.stage3(x2)
        x4 = self.stage4(x3)
        return [x4, x3, x2, x1, x0]


class Linknet(nn.Module):
    def __init__(self, classes=1):
        super().__init__()
        self.encoder = SmallEncoder()
        self.decoder = LinknetDecoder(encoder_channels=self.encoder.out_shapes, prefinal_channels=32,
                                      final_channels=classes)

    def forward(self, x):
        return self.decoder(self.encoder(x))


def main():
    torch.manual_seed(0)
    model = Linknet(classes=1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCEWithLogitsLoss()
    for step in range(3):
        images = torch.rand(2, 3, 64, 64)
        masks = (torch.rand(2, 1, 64, 64) > 0.5).float()
        loss = criterion(model(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("loss %.4f" % loss.item())


if __name__ == "__main__":
    main()
