# source: https://github.com/wonbeomjang/mobile-hair-segmentation-pytorch/issues/3
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
"""mobile-hair-segmentation `loss/loss.py` `ImageGradientLoss.forward`: the hair-mask logits are binarised with
`pred.argmax(1)...float()` before the Sobel gradients are taken, so the image-gradient loss has no path back to the
network. As in the reporter's toy experiment, the trainer backpropagates the image-gradient loss on its own."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.loss import _WeightedLoss

torch.manual_seed(0)


class ImageGradientLoss(_WeightedLoss):
    def __init__(self, size_average=None, reduce=None, reduction='mean', device=None):
        super(ImageGradientLoss, self).__init__(size_average, reduce, reduction)
        self.device = device if device else torch.device("cpu")

    def forward(self, pred, gray_image):
        size = pred.size()
        pred = pred.argmax(1).view(size[0], 1, size[2], size[3]).float()
        gradient_tensor_x = torch.Tensor([[1.0, 0.0, -1.0],
                                          [2.0, 0.0, -2.0],
                                          [1.0, 0.0, -1.0]]).to(self.device).view((1, 1, 3, 3))

        gradient_tensor_y = torch.Tensor([[1.0, 2.0, 1.0],
                                          [0.0, 0.0, 0.0],
                                          [-1.0, -2.0, -1.0]]).to(self.device).view((1, 1, 3, 3))

        I_x = F.conv2d(gray_image, gradient_tensor_x)
        G_x = F.conv2d(pred, gradient_tensor_x)

        I_y = F.conv2d(gray_image, gradient_tensor_y)
        G_y = F.conv2d(pred, gradient_tensor_y)

        G = torch.sqrt(torch.pow(G_x, 2) + torch.pow(G_y, 2))

        gradient = 1 - torch.pow(I_x * G_x + I_y * G_y, 2)

        image_gradient_loss = torch.sum(torch.mul(G, gradient)) / torch.sum(G)

        image_gradient_loss = image_gradient_loss if image_gradient_loss > 0 else 0

        return image_gradient_loss


class MobileHairNet(nn.Module):
    """Small encoder-decoder standing in for the MobileNet-based HairMatteNet: 2-channel logits per pixel."""

    def __init__(self):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU())
        self.decode = nn.Sequential(nn.Upsample(scale_factor=4), nn.Conv2d(16, 2, 3, padding=1))
        nn.init.zeros_(self.decode[1].bias)

    def forward(self, x):
        return self.decode(self.encode(x))


class Trainer:
    def __init__(self, data_loader, lr=1e-3, num_epoch=1):
        self.data_loader = data_loader
        self.num_epoch = num_epoch
        self.device = torch.device("cpu")
        self.net = MobileHairNet().to(self.device)
        self.image_gradient_criterion = ImageGradientLoss(device=self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)

    def train(self):
        for epoch in range(self.num_epoch):
            for step, (image, gray_image, mask) in enumerate(self.data_loader):
                image = image.to(self.device)
                gray_image = gray_image.to(self.device)
                pred = self.net(image)
                image_gradient_loss = self.image_gradient_criterion(pred, gray_image)
                self.optimizer.zero_grad()
                image_gradient_loss.backward()  # expect: AG010
                self.optimizer.step()
                print(f"epoch {epoch} step {step} | image gradient loss {float(image_gradient_loss):.4f}")


def make_batch(n=2, size=32):
    image = F.interpolate(torch.rand(n, 3, 4, 4), size=(size, size), mode='bilinear', align_corners=False)
    gray = (0.299 * image[:, 0] + 0.587 * image[:, 1] + 0.114 * image[:, 2]).unsqueeze(1)
    mask = (torch.rand(n, 1, size, size) > 0.5).float()
    return image, gray, mask


Trainer([make_batch() for _ in range(2)]).train()
