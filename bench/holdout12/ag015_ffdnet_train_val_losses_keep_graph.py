# source: https://github.com/Aoi-hosizora/FFDNet_pytorch/issues/4
# symptom: losses keep the graph of every batch: True
"""FFDNet_pytorch `ffdnet.py` `train()`: per batch and noise level, `train_losses += train_loss` and, in
the validation pass (no `torch.no_grad()`), `val_losses += val_loss`. Both sums are tensors that chain
the graph of every batch, so CUDA runs out of memory once validation starts; the reporter fixed it with
`float(...)`. The program prints whether the epoch sums still hold autograd graphs."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FFDNet(nn.Module):
    def __init__(self, is_gray=True, features=16, layers=4):
        super().__init__()
        channels = 1 if is_gray else 3
        self.down = nn.PixelUnshuffle(2)
        body = [nn.Conv2d(channels * 4 + 1, features, 3, padding=1), nn.ReLU()]
        for _ in range(layers - 2):
            body += [nn.Conv2d(features, features, 3, padding=1), nn.BatchNorm2d(features), nn.ReLU()]
        body += [nn.Conv2d(features, channels * 4, 3, padding=1)]
        self.intermediate_dncnn = nn.Sequential(*body)
        self.up = nn.PixelShuffle(2)

    def forward(self, x, noise_sigma):
        noise_map = noise_sigma.view(-1, 1, 1, 1).repeat(1, 1, x.shape[2] // 2, x.shape[3] // 2)
        h = torch.cat([self.down(x), noise_map], dim=1)
        return self.up(self.intermediate_dncnn(h))


def add_batch_noise(images, noise_sigma):
    return images + torch.randn_like(images) * noise_sigma


def train(epoches=2, val_epoch=1):
    train_data = torch.rand(4, 2, 1, 16, 16)  # 4 batches of 2 gray patches
    val_data = torch.rand(2, 2, 1, 16, 16)
    train_noises = list(range(0, 76, 25))
    val_noises = list(range(0, 61, 30))
    model = FFDNet(is_gray=True)
    loss_fn = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch_idx in range(epoches):
        loss_idx = 0
        train_losses = 0
        model.train()
        for batch_data in train_data:
            for int_noise_sigma in train_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma)
                sigma = torch.full((new_images.shape[0],), noise_sigma)
                images_pred = model(new_images, sigma)
                train_loss = loss_fn(images_pred, batch_data)
                train_losses += train_loss  # expect: AG015
                loss_idx += 1
                optimizer.zero_grad()
                train_loss.backward()
                optimizer.step()
        train_losses /= loss_idx
        print(f"epoch {epoch_idx + 1}: avg train loss {float(train_losses):.4f}")

        loss_idx = 0
        val_losses = 0
        if (epoch_idx + 1) % val_epoch != 0:
            continue
        model.eval()
        for batch_data in val_data:
            for int_noise_sigma in val_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma)
                sigma = torch.full((new_images.shape[0],), noise_sigma)
                images_pred = model(new_images, sigma)
                val_loss = loss_fn(images_pred, batch_data)
                val_losses += val_loss  # expect: AG015
                loss_idx += 1
        val_losses /= loss_idx
        print(f"epoch {epoch_idx + 1}: avg val loss {float(val_losses):.4f}")
        kept = torch.is_tensor(train_losses) and train_losses.grad_fn is not None
        kept = kept or (torch.is_tensor(val_losses) and val_losses.grad_fn is not None)
        print(f"losses keep the graph of every batch: {kept}")


if __name__ == "__main__":
    train()
