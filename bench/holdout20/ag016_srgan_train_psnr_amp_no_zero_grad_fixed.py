# source: https://github.com/Lornatang/SRGAN-PyTorch/commit/b7743b74bdc809d2e15fc0ffc9dfaf7e75a46053
# symptom: gradients carried over from the previous step: True
"""SRGAN-PyTorch: `train_psnr`, the PSNR-oriented pre-training of the SRResNet generator with mixed precision
(autocast + GradScaler).

Fixed as in the commit: `model.zero_grad()` at the start of every batch, before the autocast forward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import amp

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, channels, 3, 1, 1, bias=False), nn.BatchNorm2d(channels),
                                  nn.PReLU(), nn.Conv2d(channels, channels, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(channels))

    def forward(self, x):
        return x + self.body(x)


class Generator(nn.Module):
    def __init__(self, channels=16, blocks=2, upscale=2):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, channels, 9, 1, 4), nn.PReLU())
        self.trunk = nn.Sequential(*[ResidualBlock(channels) for _ in range(blocks)])
        self.conv2 = nn.Sequential(nn.Conv2d(channels, channels, 3, 1, 1, bias=False), nn.BatchNorm2d(channels))
        self.upsampling = nn.Sequential(nn.Conv2d(channels, channels * upscale ** 2, 3, 1, 1),
                                        nn.PixelShuffle(upscale), nn.PReLU())
        self.conv3 = nn.Conv2d(channels, 3, 9, 1, 4)

    def forward(self, x):
        out1 = self.conv1(x)
        out = self.conv2(self.trunk(out1)) + out1
        return self.conv3(self.upsampling(out))


class PairDataset(torch.utils.data.Dataset):
    def __init__(self, n=32):
        self.hr = torch.rand(n, 3, 16, 16)

    def __len__(self):
        return len(self.hr)

    def __getitem__(self, i):
        hr = self.hr[i]
        lr = F.interpolate(hr[None], scale_factor=0.5, mode="bicubic", align_corners=False)[0]
        return lr, hr


carried_over = []


def train_psnr(epoch, total_epoch, total_iters, dataloader, model, pixel_criterion, optimizer, scaler, device):
    model.train()
    for i, (input, target) in enumerate(dataloader):
        lr = input.to(device)
        hr = target.to(device)

        model.zero_grad()
        # Runs the forward pass with autocasting.
        with amp.autocast(device_type=device.type, dtype=torch.bfloat16):
            sr = model(lr)
            loss = pixel_criterion(sr.float(), hr)

        carried_over.append(any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in model.parameters()))
        # Scales loss.  Calls backward() on scaled loss to create scaled gradients.
        scaler.scale(loss).backward()
        # scaler.step() first unscales the gradients of the optimizer's assigned params.
        scaler.step(optimizer)
        scaler.update()

        print(f"[{epoch + 1}/{total_epoch}][{i + 1}/{len(dataloader)}] MSE Loss: {loss.item():.6f}")
        iters = i + epoch * len(dataloader) + 1
        if iters == int(total_iters):
            break


device = torch.device("cpu")
model = Generator().to(device)
dataloader = torch.utils.data.DataLoader(PairDataset(), batch_size=8, shuffle=True)
pixel_criterion = nn.MSELoss().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.999))
scaler = amp.GradScaler(device.type)
for epoch in range(2):
    train_psnr(epoch, 2, 100, dataloader, model, pixel_criterion, optimizer, scaler, device)
print("gradients carried over from the previous step:", any(carried_over))
