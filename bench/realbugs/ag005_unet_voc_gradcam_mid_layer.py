# source: https://github.com/ramprs/grad-cam/issues/26
# symptom: grad can be implicitly created only for scalar outputs
# The reporter trained a U-Net on the VOC data set, loaded their own weights, and ran Grad-CAM with "the activation
# of a certain layer in the middle" as the target: the backward started from that activation, a whole
# [1, C, H, W] feature map, with no gradient argument, and raised. Re-created as a small U-Net whose middle block's
# activation is caught by a forward hook, and a GradCam helper that backpropagates from it.
import torch
import torch.nn as nn
import torch.nn.functional as F


def double_conv(in_ch, out_ch):
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, 3, padding=1), nn.BatchNorm2d(out_ch), nn.ReLU(),
        nn.Conv2d(out_ch, out_ch, 3, padding=1), nn.BatchNorm2d(out_ch), nn.ReLU(),
    )


class UNet(nn.Module):
    def __init__(self, n_channels=3, n_classes=21):
        super().__init__()
        self.inc = double_conv(n_channels, 8)
        self.down1 = double_conv(8, 16)
        self.down2 = double_conv(16, 32)
        self.up1 = double_conv(32 + 16, 16)
        self.up2 = double_conv(16 + 8, 8)
        self.outc = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(F.max_pool2d(x1, 2))
        x3 = self.down2(F.max_pool2d(x2, 2))
        y = self.up1(torch.cat([F.interpolate(x3, scale_factor=2), x2], dim=1))
        y = self.up2(torch.cat([F.interpolate(y, scale_factor=2), x1], dim=1))
        return self.outc(y)


class GradCam:
    def __init__(self, model, target_layer):
        self.model = model.eval()
        self.activation = None
        self.gradient = None
        target_layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, inputs, output):
        self.activation = output
        output.register_hook(self.save_gradient)

    def save_gradient(self, grad):
        self.gradient = grad

    def __call__(self, img):
        self.model.zero_grad()
        self.model(img)
        target = self.activation
        target.backward()  # expect: AG005
        weights = self.gradient.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activation).sum(dim=1))
        return cam / (cam.max() + 1e-8)


torch.manual_seed(0)
model = UNet()
model.load_state_dict(UNet().state_dict())  # "loaded my own weights"
cam = GradCam(model, model.down2)
img = torch.randn(1, 3, 32, 32)
print(cam(img).shape)
