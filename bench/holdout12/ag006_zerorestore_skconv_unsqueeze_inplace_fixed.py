# source: https://github.com/aupendu/zero-restore/issues/7
# symptom: modified by an inplace operation
"""zero-restore (zero-shot underwater restoration): `SKConv.forward` stacks the branch features with
`fea = conv(x).unsqueeze_(dim=1)`. The first branch is the shared `InConv`, whose last layer is an
out-of-place ReLU: its output is saved by ReluBackward, and `unsqueeze_` changes that saved tensor in
place, so the first backward fails (the reporter had already turned every ReLU out of place).

Fixed as the maintainer answered: `.clone()` the branch output in `SKConv.forward` before `unsqueeze_`."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class InConv(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, ch, 7, stride=4, padding=3, bias=False),
            nn.GroupNorm(num_channels=ch, num_groups=4),
            nn.ReLU(inplace=False),
        )
        self.convf = nn.Sequential(
            nn.Conv2d(ch, ch, 3, padding=1, bias=False),
            nn.GroupNorm(num_channels=ch, num_groups=4),
            nn.ReLU(inplace=False),
        )

    def forward(self, x):
        r, g, b = x[:, 0:1], x[:, 1:2], x[:, 2:3]
        feats = torch.cat([self.conv(r).unsqueeze(1), self.conv(g).unsqueeze(1), self.conv(b).unsqueeze(1)], 1)
        feats, _ = torch.min(feats, dim=1)
        return self.convf(feats)


class SKConv(nn.Module):
    def __init__(self, features=16, M=3, L=8):
        super().__init__()
        in_conv = InConv(features)
        self.convs = nn.ModuleList()
        for i in range(M):
            if i == 0:
                self.convs.append(in_conv)
            else:
                self.convs.append(nn.Sequential(
                    nn.Upsample(scale_factor=1 / (2 ** i), mode="bilinear", align_corners=True),
                    in_conv,
                    nn.Upsample(scale_factor=2 ** i, mode="bilinear", align_corners=True),
                ))
        self.fc = nn.Linear(features, L)
        self.fcs = nn.ModuleList([nn.Linear(L, features) for _ in range(M)])
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            fea = conv(x).clone().unsqueeze_(dim=1)
            feas = fea if i == 0 else torch.cat([feas, fea], dim=1)
        fea_u = torch.sum(feas, dim=1)
        fea_z = self.fc(fea_u.mean(-1).mean(-1))
        for i, fc in enumerate(self.fcs):
            vector = fc(fea_z).unsqueeze(dim=1)
            attention = vector if i == 0 else torch.cat([attention, vector], dim=1)
        attention = self.softmax(attention).unsqueeze(-1).unsqueeze(-1)
        return (feas * attention).sum(dim=1)


class Estimation(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.in_conv = SKConv(ch)
        self.out_conv = nn.Conv2d(ch, 3, 3, padding=1)
        self.up = nn.Upsample(scale_factor=4, mode="bilinear", align_corners=True)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dense = nn.Linear(ch, 3, bias=False)

    def forward(self, x):
        xmin = self.in_conv(x)
        trans = torch.sigmoid(self.out_conv(self.up(xmin))) + 1e-12
        atm = torch.sigmoid(self.dense(self.pool(xmin).flatten(1)))
        return trans, atm


class MainModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.estimation = Estimation()

    def forward(self, x):
        trans, atm = self.estimation(x)
        atm = atm[:, :, None, None].expand_as(x)
        out = (x - (1 - trans) * atm) / trans
        return trans, atm, out


def main():
    model = MainModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    image = torch.rand(1, 3, 32, 32)
    for step in range(5):
        trans, atm, out = model(image)
        # zero-shot objective: the re-degraded restoration should give back the input
        redegraded = out * trans + (1 - trans) * atm
        loss = torch.mean((redegraded - image) ** 2) + 0.1 * torch.mean(out.clamp(min=0, max=1) - out) ** 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
