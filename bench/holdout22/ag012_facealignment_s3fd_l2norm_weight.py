# source: https://github.com/1adrianb/face-alignment/commit/627cc9ecbe3fceb0c9410e87ac0aa8bf9714683e
# symptom: loss nan
"""face-alignment detection/sfd/net_s3fd.py before the fix: `L2Norm.__init__` allocates its
scale with `nn.Parameter(torch.Tensor(self.n_channels))` and then "initialises" it with
`self.weight.data *= 0.0; self.weight.data += self.scale`. Both updates read the
uninitialised memory first, so a NaN or inf already there survives (`nan * 0 == nan`) and
the normalised feature maps, and everything after them, turn NaN.

Runs in PyTorch's deterministic mode, in which uninitialised memory is filled with NaN, so
that the uninitialised read shows on every run. Stand-ins: a reduced S3FD (fewer, narrower
conv stages; two of its L2Norm-scaled detection heads) trained from scratch on random
images and anchor targets; the repository loads pretrained weights at inference.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale=1.0):
        super(L2Norm, self).__init__()
        self.n_channels = n_channels
        self.scale = scale
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))  # expect: AG012
        self.weight.data *= 0.0
        self.weight.data += self.scale

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x = x / norm * self.weight.view(1, -1, 1, 1)
        return x


class s3fd(nn.Module):
    def __init__(self):
        super(s3fd, self).__init__()
        self.conv1_1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1)
        self.conv2_1 = nn.Conv2d(8, 16, kernel_size=3, stride=1, padding=1)
        self.conv3_1 = nn.Conv2d(16, 32, kernel_size=3, stride=1, padding=1)
        self.conv4_1 = nn.Conv2d(32, 32, kernel_size=3, stride=1, padding=1)

        self.conv3_3_norm = L2Norm(32, scale=10)
        self.conv4_3_norm = L2Norm(32, scale=8)

        self.conv3_3_norm_mbox_conf = nn.Conv2d(32, 4, kernel_size=3, stride=1, padding=1)
        self.conv3_3_norm_mbox_loc = nn.Conv2d(32, 4, kernel_size=3, stride=1, padding=1)
        self.conv4_3_norm_mbox_conf = nn.Conv2d(32, 2, kernel_size=3, stride=1, padding=1)
        self.conv4_3_norm_mbox_loc = nn.Conv2d(32, 4, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        h = F.relu(self.conv1_1(x))
        h = F.max_pool2d(h, 2, 2)
        h = F.relu(self.conv2_1(h))
        h = F.max_pool2d(h, 2, 2)
        h = F.relu(self.conv3_1(h))
        f3_3 = h
        h = F.max_pool2d(h, 2, 2)
        h = F.relu(self.conv4_1(h))
        f4_3 = h

        f3_3 = self.conv3_3_norm(f3_3)
        f4_3 = self.conv4_3_norm(f4_3)

        cls1 = self.conv3_3_norm_mbox_conf(f3_3)
        reg1 = self.conv3_3_norm_mbox_loc(f3_3)
        cls2 = self.conv4_3_norm_mbox_conf(f4_3)
        reg2 = self.conv4_3_norm_mbox_loc(f4_3)

        # max-out background label
        chunk = torch.chunk(cls1, 4, 1)
        bmax = torch.max(torch.max(chunk[0], chunk[1]), chunk[2])
        cls1 = torch.cat([bmax, chunk[3]], dim=1)
        return [cls1, reg1, cls2, reg2]


def main():
    torch.manual_seed(0)
    net = s3fd()
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    for step in range(3):
        img = torch.rand(2, 3, 32, 32)
        cls1, reg1, cls2, reg2 = net(img)
        labels1 = torch.randint(0, 2, (2, cls1.shape[2], cls1.shape[3]))
        labels2 = torch.randint(0, 2, (2, cls2.shape[2], cls2.shape[3]))
        loss = (F.cross_entropy(cls1, labels1) + F.cross_entropy(cls2, labels2)
                + F.smooth_l1_loss(reg1, torch.zeros_like(reg1)) + F.smooth_l1_loss(reg2, torch.zeros_like(reg2)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step %d loss %.4f" % (step, loss.item()))


if __name__ == "__main__":
    main()
