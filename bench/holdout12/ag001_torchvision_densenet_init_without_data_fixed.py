# source: https://github.com/pytorch/vision/pull/481
# symptom: leaf Variable that requires grad is being used in an in-place operation
"""torchvision pull request #481 (models for PyTorch 0.4): besides moving to `nn.init.kaiming_normal_`, it
drops `.data` from DenseNet's weight initialisation, `m.weight.fill_(1)`, `m.bias.zero_()`. Those are
in-place writes on leaf Parameters outside `torch.no_grad()` ("i think the `.data` is still needed" in
review), so building the model fails.

Fixed the way torchvision's DenseNet initialises today, with `nn.init.constant_` (which works under
`torch.no_grad()`; the review's options were keeping `.data` or a `torch.no_grad()` block)."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _DenseLayer(nn.Sequential):
    def __init__(self, num_input_features, growth_rate, bn_size):
        super().__init__()
        self.add_module("norm1", nn.BatchNorm2d(num_input_features))
        self.add_module("relu1", nn.ReLU())
        self.add_module("conv1", nn.Conv2d(num_input_features, bn_size * growth_rate, 1, bias=False))
        self.add_module("norm2", nn.BatchNorm2d(bn_size * growth_rate))
        self.add_module("relu2", nn.ReLU())
        self.add_module("conv2", nn.Conv2d(bn_size * growth_rate, growth_rate, 3, padding=1, bias=False))

    def forward(self, x):
        return torch.cat([x, super().forward(x)], 1)


class _DenseBlock(nn.Sequential):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate):
        super().__init__()
        for i in range(num_layers):
            self.add_module("denselayer%d" % (i + 1),
                            _DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size))


class _Transition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.add_module("norm", nn.BatchNorm2d(num_input_features))
        self.add_module("relu", nn.ReLU())
        self.add_module("conv", nn.Conv2d(num_input_features, num_output_features, 1, bias=False))
        self.add_module("pool", nn.AvgPool2d(kernel_size=2, stride=2))


class DenseNet(nn.Module):
    def __init__(self, growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, 3, padding=1, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU()),
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add_module("denseblock%d" % (i + 1),
                                     _DenseBlock(num_layers, num_features, bn_size, growth_rate))
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module("transition%d" % (i + 1), _Transition(num_features, num_features // 2))
                num_features = num_features // 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

        # Official init from torch repo.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        features = self.features(x)
        out = F.adaptive_avg_pool2d(F.relu(features), 1).flatten(1)
        return self.classifier(out)


def main():
    model = DenseNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    for step in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
