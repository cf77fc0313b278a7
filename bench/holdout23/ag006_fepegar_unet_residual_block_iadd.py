# source: https://github.com/fepegar/unet/pull/37
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""fepegar/unet (#36, fixed by pull request #37): with `residual=True`, EncodingBlock.forward and
DecodingBlock.forward add the 1x1 residual connection with `x += connection` onto the output of
`self.conv2`, a ConvolutionalBlock that ends with `nn.ReLU()`; ReLU saved that output for backward, so
training a residual UNet2D raises at `loss.backward()`."""
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

CHANNELS_DIMENSION = 1


class ConvolutionalBlock(nn.Module):
    def __init__(self, dimensions: int, in_channels: int, out_channels: int,
                 normalization: Optional[str] = None, kernel_size: int = 3,
                 activation: Optional[str] = 'ReLU', preactivation: bool = False,
                 padding: int = 0, dropout: float = 0):
        super().__init__()
        block = nn.ModuleList()
        if padding:
            padding = (kernel_size - 1) // 2
        conv_class = getattr(nn, 'Conv{}d'.format(dimensions))
        no_bias = not preactivation and (normalization is not None)
        conv_layer = conv_class(in_channels, out_channels, kernel_size,
                                padding=padding, bias=not no_bias)
        norm_layer = None
        if normalization is not None:
            norm_class = getattr(nn, '{}Norm{}d'.format(normalization.capitalize(), dimensions))
            norm_layer = norm_class(in_channels if preactivation else out_channels)
        activation_layer = None
        if activation is not None:
            activation_layer = getattr(nn, activation)()
        if preactivation:
            self.add_if_not_none(block, norm_layer)
            self.add_if_not_none(block, activation_layer)
            self.add_if_not_none(block, conv_layer)
        else:
            self.add_if_not_none(block, conv_layer)
            self.add_if_not_none(block, norm_layer)
            self.add_if_not_none(block, activation_layer)
        if dropout:
            self.add_if_not_none(block, getattr(nn, 'Dropout{}d'.format(dimensions))(p=dropout))
        self.conv_layer = conv_layer
        self.block = nn.Sequential(*block)

    def forward(self, x):
        return self.block(x)

    @staticmethod
    def add_if_not_none(module_list, module):
        if module is not None:
            module_list.append(module)


class EncodingBlock(nn.Module):
    def __init__(self, in_channels, out_channels_first, dimensions, normalization,
                 pooling_type, is_first_block=False, residual=False, padding=0,
                 activation='ReLU'):
        super().__init__()
        self.residual = residual
        self.conv1 = ConvolutionalBlock(dimensions, in_channels, out_channels_first,
                                        normalization=None if is_first_block else normalization,
                                        padding=padding, activation=activation)
        out_channels_second = out_channels_first
        self.conv2 = ConvolutionalBlock(dimensions, out_channels_first, out_channels_second,
                                        normalization=normalization, padding=padding,
                                        activation=activation)
        if residual:
            self.conv_residual = ConvolutionalBlock(dimensions, in_channels, out_channels_second,
                                                    kernel_size=1, normalization=None,
                                                    activation=None)
        self.downsample = None
        if pooling_type is not None:
            self.downsample = getattr(nn, '{}Pool{}d'.format(pooling_type.capitalize(), dimensions))(2)

    def forward(self, x):
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x += connection  # expect: AG006
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        if self.downsample is None:
            return x
        skip_connection = x
        x = self.downsample(x)
        return x, skip_connection

    @property
    def out_channels(self):
        return self.conv2.conv_layer.out_channels


class DecodingBlock(nn.Module):
    def __init__(self, in_channels_skip_connection, dimensions, normalization,
                 residual=False, padding=0, activation='ReLU'):
        super().__init__()
        self.residual = residual
        up_channels = 2 * in_channels_skip_connection
        self.upsample = nn.ConvTranspose2d(up_channels, up_channels, kernel_size=2, stride=2)
        in_channels_first = in_channels_skip_connection * (1 + 2)
        out_channels = in_channels_skip_connection
        self.conv1 = ConvolutionalBlock(dimensions, in_channels_first, out_channels,
                                        normalization=normalization, padding=padding,
                                        activation=activation)
        self.conv2 = ConvolutionalBlock(dimensions, out_channels, out_channels,
                                        normalization=normalization, padding=padding,
                                        activation=activation)
        if residual:
            self.conv_residual = ConvolutionalBlock(dimensions, in_channels_first, out_channels,
                                                    kernel_size=1, normalization=None,
                                                    activation=None)

    def forward(self, skip_connection, x):
        x = self.upsample(x)
        x = torch.cat((skip_connection, x), dim=CHANNELS_DIMENSION)
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x += connection  # expect: AG006
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        return x


class UNet2D(nn.Module):
    def __init__(self, in_channels=1, out_classes=2, num_encoding_blocks=3,
                 out_channels_first_layer=8, normalization='batch', residual=False):
        super().__init__()
        depth = num_encoding_blocks - 1
        padding = 1 if residual else 0  # force padding for residual blocks
        self.encoding_blocks = nn.ModuleList()
        in_ch, out_ch = in_channels, out_channels_first_layer
        for i in range(depth):
            self.encoding_blocks.append(EncodingBlock(in_ch, out_ch, 2, normalization, 'max',
                                                      is_first_block=(i == 0),
                                                      residual=residual, padding=padding))
            in_ch, out_ch = out_ch, out_ch * 2
        self.bottom_block = EncodingBlock(in_ch, 2 * in_ch, 2, normalization, None,
                                          residual=residual, padding=padding)
        self.decoding_blocks = nn.ModuleList()
        skip_ch = out_channels_first_layer * 2 ** (depth - 1)
        for _ in range(depth):
            self.decoding_blocks.append(DecodingBlock(skip_ch, 2, normalization,
                                                      residual=residual, padding=padding))
            skip_ch //= 2
        self.classifier = ConvolutionalBlock(2, out_channels_first_layer, out_classes,
                                             kernel_size=1, activation=None)

    def forward(self, x):
        skip_connections = []
        for block in self.encoding_blocks:
            x, skip = block(x)
            skip_connections.append(skip)
        x = self.bottom_block(x)
        for skip, block in zip(reversed(skip_connections), self.decoding_blocks):
            x = block(skip, x)
        return self.classifier(x)


def main():
    torch.manual_seed(0)
    model = UNet2D(in_channels=1, out_classes=2, residual=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(4, 1, 32, 32)
    labels = (images > 0).long().squeeze(1)
    for step in range(3):
        optimizer.zero_grad()
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
