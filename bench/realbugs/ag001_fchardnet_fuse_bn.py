# source: https://github.com/PingoLH/FCHarDNet/issues/61
# symptom: leaf Variable that requires grad is being used in an in-place operation
# FCHarDNet's test.py folds each BatchNorm into the preceding conv before inference, copying the fused
# kernel with cconv.weight[:,:,:,:] = W[:,:,:,:] on a conv whose weight still requires grad. Re-created as that fuse helper.
import torch
import torch.nn as nn


class ConvLayer(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel=3, stride=1):
        super().__init__()
        self.add_module("conv", nn.Conv2d(in_channels, out_channels, kernel, stride, kernel // 2, bias=False))
        self.add_module("norm", nn.BatchNorm2d(out_channels))
        self.add_module("relu", nn.ReLU(inplace=True))


class TinyHarDNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.base = nn.ModuleList([ConvLayer(3, 8), ConvLayer(8, 16, stride=2), ConvLayer(16, 16)])
        self.final = nn.Conv2d(16, n_classes, 1)

    def forward(self, x):
        for layer in self.base:
            x = layer(x)
        return self.final(x)


def fuse_bn_recursively(model):
    for name, module in model.named_children():
        if isinstance(module, ConvLayer):
            cconv, bn = module.conv, module.norm
            scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            W = cconv.weight * scale.view(-1, 1, 1, 1)
            b = bn.bias - bn.running_mean * scale
            cconv.weight[:, :, :, :] = W[:, :, :, :]  # expect: AG001
            cconv.bias = nn.Parameter(b)
            module.norm = nn.Identity()
        else:
            fuse_bn_recursively(module)
    return model


torch.manual_seed(0)
model = TinyHarDNet()
model.eval()
model = fuse_bn_recursively(model)
print(model(torch.randn(1, 3, 16, 16)).shape)
