# source: https://github.com/Jee-King/TSAN/issues/3
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""TSAN super-resolution: the CSB branch of a multi-context attention block builds its output with `out = x`
and then writes the re-mixed quarters into `out[...]` slice by slice. `out` is the block's input itself, which
the dense branch (its convolutions) saved for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MakeDense(nn.Module):
    def __init__(self, n_channels, n_feats):
        super().__init__()
        self.conv_1x1 = nn.Conv2d(n_channels, n_feats, 1)
        self.conv_3x3 = nn.Conv2d(n_feats, n_feats, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.conv_1x1(x))
        out = self.relu(self.conv_3x3(out))
        return torch.cat([out, x], 1)


class DRB(nn.Module):
    """Dense residual branch."""

    def __init__(self, n_feats, n_layers=2):
        super().__init__()
        layers, channels = [], n_feats
        for _ in range(n_layers):
            layers.append(MakeDense(channels, n_feats))
            channels += n_feats
        self.dense = nn.Sequential(*layers)
        self.fuse = nn.Conv2d(channels, n_feats, 1, bias=False)

    def forward(self, x):
        return x + self.fuse(self.dense(x))


class CSB(nn.Module):
    """Cross-scale branch: re-mixes the four spatial quarters of the feature map."""

    def __init__(self, n_feats):
        super().__init__()
        self.mix = nn.Conv2d(n_feats * 4, n_feats * 4, 1, bias=False)

    def forward(self, x):
        h, w = x.size(2) // 2, x.size(3) // 2
        quarters = [x[:, :, :h, :w], x[:, :, h:, :w], x[:, :, :h, w:], x[:, :, h:, w:]]
        mixed = self.mix(torch.cat(quarters, 1))
        c = mixed.size(1) // 4
        out = x
        out[:, :, :h, :w] = mixed[:, :c]  # expect: AG006
        out[:, :, h:, :w] = mixed[:, c:2 * c]  # expect: AG006
        out[:, :, :h, w:] = mixed[:, 2 * c:3 * c]  # expect: AG006
        out[:, :, h:, w:] = mixed[:, 3 * c:]  # expect: AG006
        return out


class MCAB(nn.Module):
    def __init__(self, n_feats):
        super().__init__()
        self.drb = DRB(n_feats)
        self.csb = CSB(n_feats)
        self.conv3 = nn.Conv2d(n_feats, n_feats, 3, padding=1, bias=False)

    def forward(self, x):
        down = self.drb(x)
        top = self.csb(x)
        top = torch.sigmoid(self.conv3(top))
        return down * top


class TSAN(nn.Module):
    def __init__(self, n_colors=3, n_feats=16, scale=2):
        super().__init__()
        self.head = nn.Conv2d(n_colors, n_feats, 1)
        self.relu = nn.ReLU()
        self.body1 = MCAB(n_feats)
        self.body2 = MCAB(n_feats)
        self.tail = nn.Conv2d(n_feats * 2, n_feats, 1)
        self.up = nn.Sequential(nn.Conv2d(n_feats, n_feats * scale * scale, 3, padding=1), nn.PixelShuffle(scale))
        self.out = nn.Conv2d(n_feats, n_colors, 3, padding=1)

    def forward(self, x):
        first = self.relu(self.head(x))
        d1 = self.body1(first)
        d2 = self.body2(d1)
        out = self.tail(torch.cat([d1, d2], 1)) + first
        return self.out(self.up(out))


class Trainer:
    def __init__(self, model):
        self.model = model
        self.loss = nn.L1Loss()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def train_epoch(self, batches):
        self.model.train()
        for lr_img, hr_img in batches:
            self.optimizer.zero_grad()
            sr = self.model(lr_img)
            loss = self.loss(sr, hr_img)
            loss.backward()
            self.optimizer.step()
            print(f"loss {loss.item():.4f}")


batches = [(torch.rand(2, 3, 12, 12), torch.rand(2, 3, 24, 24)) for _ in range(2)]
Trainer(TSAN()).train_epoch(batches)
