"""MultiResUNet's residual path adds the 1x1 shortcut into a ReLU output in place.

`Respath.forward` runs the 3x3 conv block, whose `Conv2d_batchnorm.forward` ends in `F.relu(x)`, and then does
`x += shortcut` on that result, once before the loop and once per step of the path. ReLU saved its output for its own
backward, so the first training step of the U-Net stops at `loss.backward()`.

Clean twin: both residual additions in `Respath.forward` are written `x = x + shortcut`, as the issue suggests; the
`x += temp` on the batch-norm output in `Multiresblock` stays, since batch norm does not keep its output for
backward.
"""
# source: https://github.com/j-sripad/mulitresunet-pytorch/issues/3
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2d_batchnorm(nn.Module):
    def __init__(self, input_features, num_of_filters, kernel_size=(2, 2), stride=(1, 1), activation="relu", padding=0):
        super().__init__()
        self.activation = activation
        self.conv1 = nn.Conv2d(input_features, num_of_filters, kernel_size=kernel_size, stride=stride, padding=padding)
        self.batchnorm = nn.BatchNorm2d(num_of_filters, affine=False)

    def forward(self, x):
        x = self.conv1(x)
        x = self.batchnorm(x)
        if self.activation == "relu":
            return F.relu(x)
        return x


def block_width(unet_filters, alpha=1.67):
    w = unet_filters * alpha
    return int(w * 0.167) + int(w * 0.333) + int(w * 0.5)


class Multiresblock(nn.Module):
    def __init__(self, input_features, corresponding_unet_filters, alpha=1.67):
        super().__init__()
        self.W = corresponding_unet_filters * alpha
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features, block_width(corresponding_unet_filters, alpha), kernel_size=(1, 1), activation="None")
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features, int(self.W * 0.167), kernel_size=(3, 3), padding=1)
        self.conv2d_bn_5x5 = Conv2d_batchnorm(int(self.W * 0.167), int(self.W * 0.333), kernel_size=(3, 3), padding=1)
        self.conv2d_bn_7x7 = Conv2d_batchnorm(int(self.W * 0.333), int(self.W * 0.5), kernel_size=(3, 3), padding=1)
        self.batch_norm1 = nn.BatchNorm2d(block_width(corresponding_unet_filters, alpha), affine=False)

    def forward(self, x):
        temp = self.conv2d_bn_1x1(x)
        a = self.conv2d_bn_3x3(x)
        b = self.conv2d_bn_5x5(a)
        c = self.conv2d_bn_7x7(b)
        x = torch.cat([a, b, c], dim=1)
        x = self.batch_norm1(x)
        x += temp
        x = self.batch_norm1(x)
        return x


class Respath(nn.Module):
    def __init__(self, input_features, filters, respath_length):
        super().__init__()
        self.respath_length = respath_length
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features, filters, kernel_size=(1, 1), activation="None")
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features, filters, kernel_size=(3, 3), padding=1)
        self.conv2d_bn_1x1_common = Conv2d_batchnorm(filters, filters, kernel_size=(1, 1), activation="None")
        self.conv2d_bn_3x3_common = Conv2d_batchnorm(filters, filters, kernel_size=(3, 3), padding=1)
        self.batch_norm1 = nn.BatchNorm2d(filters, affine=False)

    def forward(self, x):
        shortcut = self.conv2d_bn_1x1(x)
        x = self.conv2d_bn_3x3(x)
        x = x + shortcut
        x = F.relu(x)
        x = self.batch_norm1(x)
        if self.respath_length > 1:
            for i in range(self.respath_length):
                shortcut = self.conv2d_bn_1x1_common(x)
                x = self.conv2d_bn_3x3_common(x)
                x = x + shortcut
                x = F.relu(x)
                x = self.batch_norm1(x)
        return x


class MultiResUnet(nn.Module):
    def __init__(self, channels, filters=8, nclasses=1):
        super().__init__()
        f = filters
        self.nclasses = nclasses
        self.multiresblock1 = Multiresblock(channels, f)
        self.respath1 = Respath(block_width(f), f, respath_length=4)
        self.multiresblock2 = Multiresblock(block_width(f), 2 * f)
        self.respath2 = Respath(block_width(2 * f), 2 * f, respath_length=3)
        self.multiresblock3 = Multiresblock(block_width(2 * f), 4 * f)
        self.respath3 = Respath(block_width(4 * f), 4 * f, respath_length=2)
        self.multiresblock4 = Multiresblock(block_width(4 * f), 8 * f)
        self.respath4 = Respath(block_width(8 * f), 8 * f, respath_length=1)
        self.multiresblock5 = Multiresblock(block_width(8 * f), 16 * f)
        self.pool = nn.MaxPool2d(2, 2)
        self.upsample6 = nn.ConvTranspose2d(block_width(16 * f), 8 * f, kernel_size=2, stride=2)
        self.multiresblock6 = Multiresblock(16 * f, 8 * f)
        self.upsample7 = nn.ConvTranspose2d(block_width(8 * f), 4 * f, kernel_size=2, stride=2)
        self.multiresblock7 = Multiresblock(8 * f, 4 * f)
        self.upsample8 = nn.ConvTranspose2d(block_width(4 * f), 2 * f, kernel_size=2, stride=2)
        self.multiresblock8 = Multiresblock(4 * f, 2 * f)
        self.upsample9 = nn.ConvTranspose2d(block_width(2 * f), f, kernel_size=2, stride=2)
        self.multiresblock9 = Multiresblock(2 * f, f)
        self.conv_final = Conv2d_batchnorm(block_width(f), nclasses, kernel_size=(1, 1), activation="None")

    def forward(self, x):
        x_multires1 = self.multiresblock1(x)
        x_pool1 = self.pool(x_multires1)
        x_multires1 = self.respath1(x_multires1)
        x_multires2 = self.multiresblock2(x_pool1)
        x_pool2 = self.pool(x_multires2)
        x_multires2 = self.respath2(x_multires2)
        x_multires3 = self.multiresblock3(x_pool2)
        x_pool3 = self.pool(x_multires3)
        x_multires3 = self.respath3(x_multires3)
        x_multires4 = self.multiresblock4(x_pool3)
        x_pool4 = self.pool(x_multires4)
        x_multires4 = self.respath4(x_multires4)
        x_multires5 = self.multiresblock5(x_pool4)
        up6 = torch.cat([self.upsample6(x_multires5), x_multires4], dim=1)
        x_multires6 = self.multiresblock6(up6)
        up7 = torch.cat([self.upsample7(x_multires6), x_multires3], dim=1)
        x_multires7 = self.multiresblock7(up7)
        up8 = torch.cat([self.upsample8(x_multires7), x_multires2], dim=1)
        x_multires8 = self.multiresblock8(up8)
        up9 = torch.cat([self.upsample9(x_multires8), x_multires1], dim=1)
        x_multires9 = self.multiresblock9(up9)
        return torch.sigmoid(self.conv_final(x_multires9))


def main():
    torch.manual_seed(0)
    model = MultiResUnet(channels=3, filters=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCELoss()
    images = torch.randn(2, 3, 32, 32)
    masks = (torch.rand(2, 1, 32, 32) > 0.5).float()
    for epoch in range(3):
        optimizer.zero_grad()
        loss = criterion(model(images), masks)
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
