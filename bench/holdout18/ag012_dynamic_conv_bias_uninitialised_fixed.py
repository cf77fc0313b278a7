# source: https://github.com/kaijieshi7/Dynamic-convolution-Pytorch/issues/8
# symptom: loss nan
"""Dynamic-convolution-Pytorch `dynamic_conv.py`: `Dynamic_conv2d` keeps K candidate kernels and K candidate biases
that an attention branch mixes per sample. `_initialize_weights` runs kaiming init on the kernels only; the biases
come from `nn.Parameter(torch.Tensor(K, out_planes))` and are never written, so the aggregated bias is whatever the
allocator left there. Deterministic mode (which fills uninitialised memory with NaN) makes that visible every run.

Fixed as the issue proposes (and the maintainer accepted): `nn.Parameter(torch.zeros(K, out_planes))`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)


class attention2d(nn.Module):
    def __init__(self, in_planes, ratios, K, temperature):
        super(attention2d, self).__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        hidden_planes = int(in_planes * ratios) if in_planes != 3 else K
        self.fc1 = nn.Conv2d(in_planes, hidden_planes, 1, bias=False)
        self.fc2 = nn.Conv2d(hidden_planes, K, 1, bias=False)
        self.temperature = temperature
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.avgpool(x)
        x = F.relu(self.fc1(x))
        x = self.fc2(x).view(x.size(0), -1)
        return F.softmax(x / self.temperature, 1)


class Dynamic_conv2d(nn.Module):
    def __init__(self, in_planes, out_planes, kernel_size, ratio=0.25, stride=1, padding=0, groups=1, bias=True, K=4,
                 temperature=34, init_weight=True):
        super(Dynamic_conv2d, self).__init__()
        self.in_planes = in_planes
        self.out_planes = out_planes
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.groups = groups
        self.K = K
        self.attention = attention2d(in_planes, ratio, K, temperature)
        self.weight = nn.Parameter(torch.Tensor(K, out_planes, in_planes // groups, kernel_size, kernel_size))
        if bias:
            self.bias = nn.Parameter(torch.zeros(K, out_planes))
        else:
            self.bias = None
        if init_weight:
            self._initialize_weights()

    def _initialize_weights(self):
        for i in range(self.K):
            nn.init.kaiming_uniform_(self.weight[i])

    def forward(self, x):
        softmax_attention = self.attention(x)
        batch_size, in_planes, height, width = x.size()
        x = x.view(1, -1, height, width)
        weight = self.weight.view(self.K, -1)
        aggregate_weight = torch.mm(softmax_attention, weight).view(-1, self.in_planes, self.kernel_size,
                                                                     self.kernel_size)
        aggregate_bias = torch.mm(softmax_attention, self.bias).view(-1) if self.bias is not None else None
        output = F.conv2d(x, weight=aggregate_weight, bias=aggregate_bias, stride=self.stride, padding=self.padding,
                          groups=self.groups * batch_size)
        return output.view(batch_size, self.out_planes, output.size(-2), output.size(-1))


class DyVGG(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(Dynamic_conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.MaxPool2d(2), Dynamic_conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16),
                                      nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, num_classes)
        with torch.no_grad():
            self.classifier.bias.zero_()

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


torch.manual_seed(0)
model = DyVGG()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()
for step in range(3):
    x = torch.randn(4, 3, 16, 16)
    y = torch.randint(0, 10, (4,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print("step", step, "loss", "nan" if torch.isnan(loss) else "{:.4f}".format(loss.item()))
