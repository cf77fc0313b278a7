# source: https://github.com/pytorch/vision/issues/807
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# fmassa's answer: torchvision's in-place ReLU is safe only where it is; swapping to `out = self.relu(out); out += identity`
# (a pre-activation style block) edits ReLU's saved output in place. Re-created with torchvision's BasicBlock shape.
import torch
import torch.nn as nn


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out = self.relu(out)
        out += identity  # expect: AG006
        return out


class TinyResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = nn.Sequential(BasicBlock(16, 16), BasicBlock(16, 16))
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


torch.manual_seed(0)
model = TinyResNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images, labels = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
loss = nn.functional.cross_entropy(model(images), labels)
loss.backward()
optimizer.step()
print("step done", loss.item())
