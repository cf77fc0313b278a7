# source: https://github.com/Jee-King/TSAN/issues/3
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# TSAN's CSB.forward does `out = x` and then writes the four quadrants into out[...] in place; x is the same MCAB input
# the DRB branch's convolutions already saved. The reporter's fix: out = x.clone() (tsan.py line 103). Re-created at small size.
import torch
import torch.nn as nn
import torch.nn.functional as F


class make_dense(nn.Module):
    def __init__(self, n_channels, n_feats=8):
        super().__init__()
        self.conv_1_1 = nn.Conv2d(n_channels, n_feats, 1)
        self.conv_3_1 = nn.Conv2d(n_feats, n_feats, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out1x1 = self.relu(self.conv_1_1(x))
        output = self.relu(self.conv_3_1(out1x1))
        return torch.cat([output, x], 1)


class DRB(nn.Module):
    def __init__(self, n_channels, n_denselayer=2, n_feats=8):
        super().__init__()
        modules, channels = [], n_channels
        for _ in range(n_denselayer):
            modules.append(make_dense(channels, n_feats))
            channels += n_feats
        self.dense_layers = nn.Sequential(*modules)
        self.conv_1x1 = nn.Conv2d(channels, n_feats, 1, bias=False)

    def forward(self, x):
        return x + self.conv_1x1(self.dense_layers(x))


class CSB(nn.Module):
    def __init__(self, n_feats):
        super().__init__()
        self.conv1 = nn.Conv2d(n_feats * 4, n_feats * 4, kernel_size=1, bias=False)

    def forward(self, x):
        f1 = x[:, :, 0:x.size(2) // 2, 0:x.size(3) // 2]
        f2 = x[:, :, x.size(2) // 2:, 0:x.size(3) // 2]
        f3 = x[:, :, 0:x.size(2) // 2, x.size(3) // 2:]
        f4 = x[:, :, x.size(2) // 2:, x.size(3) // 2:]
        f_all = self.conv1(torch.cat([f1, f2, f3, f4], 1))
        out = x
        out[:, :, 0:x.size(2) // 2, 0:x.size(3) // 2] = f_all[:, 0:f_all.size(1) // 4, :, :]  # expect: AG006
        out[:, :, x.size(2) // 2:, 0:x.size(3) // 2] = f_all[:, f_all.size(1) // 4:f_all.size(1) // 2, :, :]  # expect: AG006
        out[:, :, 0:x.size(2) // 2, x.size(3) // 2:] = f_all[:, f_all.size(1) // 2:f_all.size(1) * 3 // 4, :, :]  # expect: AG006
        out[:, :, x.size(2) // 2:, x.size(3) // 2:] = f_all[:, f_all.size(1) * 3 // 4:, :, :]  # expect: AG006
        return out


class MCAB(nn.Module):
    def __init__(self, n_channels, n_denselayer=2, n_feats=8):
        super().__init__()
        self.drb = DRB(n_channels, n_denselayer, n_feats)
        self.csb = CSB(n_feats)
        self.conv3 = nn.Conv2d(n_feats, n_feats, 3, padding=1, bias=False)

    def forward(self, x):
        down_b = self.drb(x)
        top_b = self.csb(x)
        top_b = F.sigmoid(self.conv3(top_b))
        return down_b * top_b


class TSAN(nn.Module):
    def __init__(self, n_colors=3, n_feats=8):
        super().__init__()
        self.first_conv = nn.Conv2d(n_colors, n_feats, 1)
        self.relu = nn.ReLU(inplace=True)
        self.body1 = MCAB(n_feats, 2, n_feats)
        self.output1 = nn.Conv2d(n_feats, n_colors, 3, padding=1)

    def forward(self, x):
        first_out = self.relu(self.first_conv(x))
        return self.output1(self.body1(first_out))


torch.manual_seed(0)
model = TSAN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
lr_img, hr_img = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)
optimizer.zero_grad()
loss = F.l1_loss(model(lr_img), hr_img)
loss.backward()
optimizer.step()
print(loss.item())
