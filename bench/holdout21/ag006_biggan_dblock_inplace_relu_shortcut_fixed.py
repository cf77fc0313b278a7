# source: https://github.com/ajbrock/BigGAN-PyTorch/commit/96e9112c620f22f5dd6302b57656a4dd2624d65c
# symptom: shortcut saw the activated input: True
"""ajbrock/BigGAN-PyTorch layers.py after "Fix inplace ReLU mistake in DBlock.forward()" (fixed):
a preactivation DBlock applies an out-of-place `h = F.relu(x)`, so the shortcut connection still
reads the block's input x even when the discriminator's activation is `nn.ReLU(inplace=True)`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

activation_dict = {'inplace_relu': nn.ReLU(inplace=True),
                   'relu': nn.ReLU(inplace=False),
                   'ir': nn.ReLU(inplace=True)}


class SNConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size=3, padding=1):
        super().__init__(in_channels, out_channels, kernel_size, padding=padding)


class DBlock(nn.Module):
    def __init__(self, in_channels, out_channels, which_conv=SNConv2d, wide=True,
                 preactivation=False, activation=None, downsample=None):
        super(DBlock, self).__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.hidden_channels = self.out_channels if wide else self.in_channels
        self.which_conv = which_conv
        self.preactivation = preactivation
        self.activation = activation
        self.downsample = downsample
        self.conv1 = self.which_conv(self.in_channels, self.hidden_channels)
        self.conv2 = self.which_conv(self.hidden_channels, self.out_channels)
        self.learnable_sc = True if (in_channels != out_channels) or downsample else False
        if self.learnable_sc:
            self.conv_sc = self.which_conv(in_channels, out_channels, kernel_size=1, padding=0)

    def shortcut(self, x):
        if self.preactivation:
            if self.learnable_sc:
                x = self.conv_sc(x)
            if self.downsample:
                x = self.downsample(x)
        else:
            if self.downsample:
                x = self.downsample(x)
            if self.learnable_sc:
                x = self.conv_sc(x)
        return x

    def forward(self, x):
        if self.preactivation:
            # this line must be an out-of-place ReLU or it will affect the shortcut connection
            h = F.relu(x)
        else:
            h = x
        h = self.conv1(h)
        h = self.conv2(self.activation(h))
        if self.downsample:
            h = self.downsample(h)
        return h + self.shortcut(x)


class Discriminator(nn.Module):
    def __init__(self, D_ch=8, D_activation=nn.ReLU(inplace=False), n_classes=4):
        super().__init__()
        self.activation = D_activation
        chs = [(3, D_ch), (D_ch, 2 * D_ch), (2 * D_ch, 4 * D_ch)]
        self.blocks = nn.ModuleList([
            DBlock(cin, cout, preactivation=(index > 0), activation=self.activation,
                   downsample=nn.AvgPool2d(2))
            for index, (cin, cout) in enumerate(chs)])
        self.linear = nn.Linear(4 * D_ch, 1)
        self.embed = nn.Embedding(n_classes, 4 * D_ch)

    def forward(self, x, y):
        h = x
        for block in self.blocks:
            h = block(h)
        h = torch.sum(self.activation(h), [2, 3])
        out = self.linear(h)
        return out + torch.sum(self.embed(y) * h, 1, keepdim=True)


def main():
    torch.manual_seed(0)
    config = {'D_nl': 'inplace_relu'}
    D = Discriminator(D_activation=activation_dict[config['D_nl']])
    D_optim = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.999))
    seen = {}
    block = D.blocks[1]
    block.register_forward_pre_hook(lambda m, inp: seen.__setitem__('x', inp[0].clone()))
    block.conv_sc.register_forward_pre_hook(lambda m, inp: seen.__setitem__('sc', inp[0].clone()))
    x = torch.randn(4, 3, 16, 16)
    y = torch.randint(0, 4, (4,))
    for _ in range(2):
        D_optim.zero_grad()
        D_loss = F.relu(1. - D(x, y)).mean()
        D_loss.backward()
        D_optim.step()
    print('D_loss', D_loss.item())
    print('shortcut saw the activated input:', not torch.equal(seen['sc'], seen['x']))


if __name__ == '__main__':
    main()
