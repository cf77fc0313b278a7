# source: https://github.com/pytorch/pytorch/issues/15428
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# The user's Block.forward runs self.shortcut(x) (a conv, which saves x) and then self.residual(x), whose first layer is
# nn.ReLU(inplace=True): x is changed in place after the conv saved it. Re-created with the Block / shortcut / residual split.
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, in_chan, out_chan, stride=1):
        super().__init__()
        self.in_chan = in_chan
        self.out_chan = out_chan
        self.stride = stride
        self.residual = nn.Sequential(
            nn.ReLU(inplace=True),
            nn.Conv2d(in_chan, out_chan, 3, stride, 1, bias=False),
            nn.BatchNorm2d(out_chan),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_chan, out_chan, 3, 1, 1, bias=False),
            nn.BatchNorm2d(out_chan),
        )
        self.shortcut = nn.Sequential(nn.Conv2d(in_chan, out_chan, 1, stride, bias=False), nn.BatchNorm2d(out_chan))

    def forward(self, x):
        if not self.stride == 1 or not self.in_chan == self.out_chan:
            sc = self.shortcut(x)
        else:
            sc = x
        resd = self.residual(x)  # expect: AG006
        out = resd + sc
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1)
        self.block1 = Block(8, 16, stride=2)
        self.block2 = Block(16, 16)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        x = self.block2(self.block1(self.stem(x)))
        return self.fc(x.mean((2, 3)))


torch.manual_seed(0)
net = Net()
optim = torch.optim.SGD(net.parameters(), lr=0.01)
inten, label = torch.randn(2, 3, 16, 16), torch.tensor([1, 3])
loss = nn.functional.cross_entropy(net(inten), label)
optim.zero_grad()
loss.backward()
optim.step()
print(loss.item())
