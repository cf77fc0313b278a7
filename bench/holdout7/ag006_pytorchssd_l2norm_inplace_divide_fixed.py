# source: https://github.com/lzx1413/PytorchSSD/issues/72
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Twin (the fix from the thread, now in the repository: `x = x / norm`). PytorchSSD `layers/modules/l2norm.py`:
`L2Norm.forward` computed `norm` from `x.pow(2)` and then divided in place,
`x /= norm`, on the conv4_3 feature map that the VGG base's `ReLU(inplace=True)` returned; both the ReLU and `pow` saved
that tensor for backward, so `loss.backward()` in `train()` failed."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init

torch.manual_seed(0)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale):
        super(L2Norm, self).__init__()
        self.n_channels = n_channels
        self.gamma = scale or None
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.gamma)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x = x / norm
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


def vgg(cfg, i=3):
    layers = []
    in_channels = i
    for v in cfg:
        if v == 'M':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return layers


class SSD(nn.Module):
    def __init__(self, num_classes=4, num_anchors=4):
        super(SSD, self).__init__()
        self.num_classes = num_classes
        self.base = nn.ModuleList(vgg([8, 'M', 16, 'M', 32]))  # ... conv4_3 + its ReLU is the last layer here
        self.L2Norm = L2Norm(32, 20)
        self.extras = nn.ModuleList([nn.Conv2d(32, 32, 3, stride=2, padding=1)])
        self.loc = nn.ModuleList([nn.Conv2d(32, num_anchors * 4, 3, padding=1), nn.Conv2d(32, num_anchors * 4, 3, padding=1)])
        self.conf = nn.ModuleList([nn.Conv2d(32, num_anchors * num_classes, 3, padding=1),
                                   nn.Conv2d(32, num_anchors * num_classes, 3, padding=1)])

    def forward(self, x):
        sources, loc, conf = [], [], []
        for k in range(len(self.base)):
            x = self.base[k](x)
        s = self.L2Norm(x)
        sources.append(s)
        for v in self.extras:
            x = F.relu(v(x), inplace=True)
            sources.append(x)
        for (x, l, c) in zip(sources, self.loc, self.conf):
            loc.append(l(x).permute(0, 2, 3, 1).contiguous())
            conf.append(c(x).permute(0, 2, 3, 1).contiguous())
        loc = torch.cat([o.view(o.size(0), -1) for o in loc], 1)
        conf = torch.cat([o.view(o.size(0), -1) for o in conf], 1)
        return loc.view(loc.size(0), -1, 4), conf.view(conf.size(0), -1, self.num_classes)


class MultiBoxLoss(nn.Module):
    """Matching is replaced by precomputed per-prior targets; the loss terms are SSD's."""

    def forward(self, predictions, targets):
        loc_data, conf_data = predictions
        loc_t, conf_t = targets
        pos = conf_t > 0
        loss_l = F.smooth_l1_loss(loc_data[pos], loc_t[pos], reduction='sum')
        loss_c = F.cross_entropy(conf_data.view(-1, conf_data.size(-1)), conf_t.view(-1), reduction='sum')
        n = pos.sum().clamp(min=1).float()
        return loss_l / n, loss_c / n


def train(net, criterion, optimizer, batches):
    net.train()
    for iteration, (images, targets) in enumerate(batches):
        out = net(images)
        optimizer.zero_grad()
        loss_l, loss_c = criterion(out, targets)
        loss = loss_l + loss_c
        loss.backward()
        optimizer.step()
        print(f"iter {iteration} || Loss: {loss.item():.4f} (loc {loss_l.item():.4f}, conf {loss_c.item():.4f})")


net = SSD()
n_priors = 8 * 8 * 4 + 4 * 4 * 4
batches = [(torch.rand(2, 3, 32, 32), (torch.randn(2, n_priors, 4), torch.randint(0, 4, (2, n_priors)))) for _ in range(2)]
train(net, MultiBoxLoss(), torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9), batches)
