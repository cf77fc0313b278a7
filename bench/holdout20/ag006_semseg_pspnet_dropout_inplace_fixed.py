# source: https://github.com/meetps/pytorch-semseg/commit/60a096ee4b32672f4459f5fa656431c7b1f9d1d0
# symptom: modified by an inplace operation
"""pytorch-semseg PSPNet (shrunk): encoder, pyramid pooling, auxiliary head, trained with the auxiliary loss.

Fixed as in the commit: `self.dropout = nn.Dropout2d(p=0.1, inplace=False)`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True, dilation=1):
        super().__init__()
        conv_mod = nn.Conv2d(int(in_channels), int(n_filters), kernel_size=k_size, padding=padding,
                             stride=stride, bias=bias, dilation=dilation)
        self.cbr_unit = nn.Sequential(conv_mod, nn.BatchNorm2d(int(n_filters)), nn.ReLU(inplace=True))

    def forward(self, inputs):
        return self.cbr_unit(inputs)


class residualBlockPSP(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, stride, dilation=1):
        super().__init__()
        self.cbr1 = conv2DBatchNormRelu(in_channels, mid_channels, 3, stride, dilation, bias=False, dilation=dilation)
        self.cb2 = nn.Sequential(nn.Conv2d(mid_channels, out_channels, 3, 1, dilation, dilation=dilation, bias=False),
                                 nn.BatchNorm2d(out_channels))
        self.shortcut = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                                      nn.BatchNorm2d(out_channels))

    def forward(self, x):
        return F.relu(self.cb2(self.cbr1(x)) + self.shortcut(x))


class pyramidPooling(nn.Module):
    def __init__(self, in_channels, pool_sizes):
        super().__init__()
        self.pool_sizes = pool_sizes
        self.paths = nn.ModuleList([conv2DBatchNormRelu(in_channels, in_channels // len(pool_sizes), 1, 1, 0,
                                                        bias=False) for _ in pool_sizes])

    def forward(self, x):
        h, w = x.shape[2:]
        outs = [x]
        for path, size in zip(self.paths, self.pool_sizes):
            out = path(F.adaptive_avg_pool2d(x, size))
            outs.append(F.interpolate(out, size=(h, w), mode="bilinear", align_corners=True))
        return torch.cat(outs, dim=1)


class pspnet(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.n_classes = n_classes
        self.convbnrelu1_1 = conv2DBatchNormRelu(3, 16, 3, 2, 1, bias=False)
        self.convbnrelu1_2 = conv2DBatchNormRelu(16, 16, 3, 1, 1, bias=False)
        self.res_block2 = residualBlockPSP(16, 16, 32, 1)
        self.res_block3 = residualBlockPSP(32, 16, 64, 2)
        self.res_block4 = residualBlockPSP(64, 32, 64, 1, dilation=2)
        self.res_block5 = residualBlockPSP(64, 32, 64, 1, dilation=4)
        self.pyramid_pooling = pyramidPooling(64, [6, 3, 2, 1])

        # Final conv layers
        self.cbr_final = conv2DBatchNormRelu(128, 32, 3, 1, 1, False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=False)
        self.classification = nn.Conv2d(32, self.n_classes, 1, 1, 0)

        # Auxiliary layers for training
        self.convbnrelu4_aux = conv2DBatchNormRelu(64, 16, 3, 1, 1, bias=False)
        self.aux_cls = nn.Conv2d(16, self.n_classes, 1, 1, 0)

    def forward(self, x):
        inp_shape = x.shape[2:]
        x = self.convbnrelu1_1(x)
        x = self.convbnrelu1_2(x)
        x = F.max_pool2d(x, 3, 2, 1)
        x = self.res_block2(x)
        x = self.res_block3(x)
        x = self.res_block4(x)

        # Auxiliary layers for training
        x_aux = self.convbnrelu4_aux(x)
        x_aux = self.dropout(x_aux)
        x_aux = self.aux_cls(x_aux)

        x = self.res_block5(x)
        x = self.pyramid_pooling(x)
        x = self.cbr_final(x)
        x = self.dropout(x)
        x = self.classification(x)
        x = F.interpolate(x, size=inp_shape, mode="bilinear", align_corners=False)

        if self.training:
            return x_aux, x
        return x


def multi_scale_cross_entropy2d(inputs, target, scale_weight=(0.4, 1.0)):
    loss = 0.0
    for w, inp in zip(scale_weight, inputs):
        inp = F.interpolate(inp, size=target.shape[1:], mode="bilinear", align_corners=False)
        loss = loss + w * F.cross_entropy(inp, target, ignore_index=250)
    return loss


model = pspnet(n_classes=5)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9, weight_decay=5e-4)
images = torch.randn(2, 3, 64, 64)
labels = torch.randint(0, 5, (2, 64, 64))

model.train()
for i in range(3):
    optimizer.zero_grad()
    outputs = model(images)
    loss = multi_scale_cross_entropy2d(outputs, labels)
    loss.backward()
    optimizer.step()
    print(f"Iter [{i + 1}/3] Loss: {loss.item():.4f}")
