# source: https://github.com/abhiskk/fast-neural-style/issues/12
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Twin (the thread points to a `tanh-fix` branch without showing it; the twin subtracts the mean out of place and uses the returned batch). fast-neural-style `train()`: with an `nn.Tanh()` added as the transformer network's last layer, the stylised
batch `y = transformer(x)` is the Tanh output, which autograd saves; `utils.subtract_imagenet_mean_batch(y)` then
subtracts the ImageNet mean from it in place (`batch -= mean`) before the VGG features and the losses."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvLayer(nn.Module):
    def __init__(self, in_c, out_c, kernel, stride):
        super().__init__()
        self.pad = nn.ReflectionPad2d(kernel // 2)
        self.conv = nn.Conv2d(in_c, out_c, kernel, stride)

    def forward(self, x):
        return self.conv(self.pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, 3, 1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, 3, 1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.relu(self.in1(self.conv1(x)))
        return self.in2(self.conv2(out)) + x


class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = ConvLayer(3, 8, 9, 1)
        self.conv2 = ConvLayer(8, 16, 3, 2)
        self.res1 = ResidualBlock(16)
        self.up = nn.Upsample(scale_factor=2)
        self.deconv = ConvLayer(16, 3, 9, 1)
        self.relu = nn.ReLU()
        self.tanh = nn.Tanh()

    def forward(self, x):
        y = self.relu(self.conv1(x))
        y = self.relu(self.conv2(y))
        y = self.res1(y)
        y = self.deconv(self.up(y))
        return self.tanh(y)


class Vgg16(nn.Module):
    """Stands in for the frozen VGG-16 feature extractor (relu1_2, relu2_2, relu3_3, relu4_3)."""

    def __init__(self):
        super().__init__()
        self.slices = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU()),
        ])
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, x):
        feats = []
        for s in self.slices:
            x = s(x)
            feats.append(x)
        return feats


def gram_matrix(y):
    b, ch, h, w = y.size()
    features = y.view(b, ch, w * h)
    return features.bmm(features.transpose(1, 2)) / (ch * h * w)


def preprocess_batch(batch):
    batch = batch.transpose(0, 1)
    r, g, b = torch.chunk(batch, 3)
    return torch.cat((b, g, r)).transpose(0, 1)


def subtract_imagenet_mean_batch(batch):
    """Subtract ImageNet mean pixel-wise from a BGR image."""
    mean = torch.zeros_like(batch.data)
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    return batch - mean


class Args:
    epochs = 1
    batch_size = 2
    content_weight = 1.0
    style_weight = 5.0
    lr = 1e-3


def train(args, train_loader, style):
    transformer = TransformerNet()
    optimizer = torch.optim.Adam(transformer.parameters(), args.lr)
    mse_loss = nn.MSELoss()
    vgg = Vgg16()
    style = preprocess_batch(style.repeat(args.batch_size, 1, 1, 1))
    with torch.no_grad():
        style = subtract_imagenet_mean_batch(style)
        gram_style = [gram_matrix(f) for f in vgg(style)]
    for e in range(args.epochs):
        transformer.train()
        for batch_id, x in enumerate(train_loader):
            n_batch = len(x)
            optimizer.zero_grad()
            x = preprocess_batch(x)
            y = transformer(x)
            xc = x.detach().clone()
            y = subtract_imagenet_mean_batch(y)
            xc = subtract_imagenet_mean_batch(xc)
            features_y = vgg(y)
            features_xc = vgg(xc)
            content_loss = args.content_weight * mse_loss(features_y[1], features_xc[1].detach())
            style_loss = 0.0
            for m in range(len(features_y)):
                style_loss += args.style_weight * mse_loss(gram_matrix(features_y[m]), gram_style[m][:n_batch])
            total_loss = content_loss + style_loss
            total_loss.backward()
            optimizer.step()
            print(f"epoch {e + 1} batch {batch_id}: content {content_loss.item():.4f} style {style_loss.item():.4f}")


loader = [torch.rand(2, 3, 16, 16) * 255 for _ in range(2)]
train(Args(), loader, torch.rand(3, 16, 16) * 255)
