"""RefineNet's chained residual pooling adds each pooled path into its input in place.

`ChainedResidualPool.forward` applies an in-place ReLU to its input, keeps it as the start of the pooling chain, and
then accumulates `x += path` after each max-pool/conv block. The first block's MaxPool saved that very tensor for its
backward, so training a RefineNet block stops at `loss.backward()`.
"""
# source: https://github.com/thomasjpfan/pytorch_refinenet/issues/2
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualConvUnit(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.conv1 = nn.Conv2d(features, features, kernel_size=3, padding=1, bias=True)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(x))
        out = self.conv2(F.relu(out))
        return out + x


class MultiResolutionFusion(nn.Module):
    def __init__(self, out_feats, *shapes):
        super().__init__()
        _, max_size = max(shapes, key=lambda s: s[1])
        for i, (feat, size) in enumerate(shapes):
            conv = nn.Conv2d(feat, out_feats, kernel_size=3, padding=1, bias=False)
            scale = max_size // size
            if scale != 1:
                self.add_module(f"resolve{i}", nn.Sequential(conv, nn.Upsample(scale_factor=scale, mode="bilinear")))
            else:
                self.add_module(f"resolve{i}", conv)

    def forward(self, *xs):
        output = self.resolve0(xs[0])
        for i, x in enumerate(xs[1:], 1):
            output = output + getattr(self, f"resolve{i}")(x)
        return output


class ChainedResidualPool(nn.Module):
    def __init__(self, feats):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        for i in range(1, 4):
            self.add_module(f"block{i}", nn.Sequential(
                nn.MaxPool2d(kernel_size=5, stride=1, padding=2),
                nn.Conv2d(feats, feats, kernel_size=3, padding=1, bias=False),
            ))

    def forward(self, x):
        x = self.relu(x)
        path = x
        for i in range(1, 4):
            path = getattr(self, f"block{i}")(path)
            x += path  # expect: AG006
        return x


class RefineNetBlock(nn.Module):
    def __init__(self, features, *shapes):
        super().__init__()
        for i, (feats, _) in enumerate(shapes):
            self.add_module(f"rcu{i}", nn.Sequential(ResidualConvUnit(feats), ResidualConvUnit(feats)))
        self.mrf = MultiResolutionFusion(features, *shapes) if len(shapes) != 1 else None
        self.crp = ChainedResidualPool(features)
        self.output_conv = ResidualConvUnit(features)

    def forward(self, *xs):
        rcu_xs = [getattr(self, f"rcu{i}")(x) for i, x in enumerate(xs)]
        out = self.mrf(*rcu_xs) if self.mrf is not None else rcu_xs[0]
        out = self.crp(out)
        return self.output_conv(out)


class TinyRefineNet(nn.Module):
    def __init__(self, num_classes=3, features=8):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.refine2 = RefineNetBlock(16, (16, 8))
        self.refine1 = RefineNetBlock(features, (16, 8), (8, 16))
        self.head = nn.Conv2d(features, num_classes, kernel_size=1)

    def forward(self, x):
        l1 = self.layer1(x)
        l2 = self.layer2(l1)
        p2 = self.refine2(l2)
        p1 = self.refine1(p2, l1)
        return F.interpolate(self.head(p1), size=x.shape[-2:], mode="bilinear")


def main():
    torch.manual_seed(0)
    model = TinyRefineNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    images = torch.randn(4, 3, 32, 32)
    masks = torch.randint(0, 3, (4, 32, 32))
    for epoch in range(3):
        optimizer.zero_grad()
        loss = criterion(model(images), masks)
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
