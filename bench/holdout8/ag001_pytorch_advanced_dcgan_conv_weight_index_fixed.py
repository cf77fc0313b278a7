# source: https://github.com/YutaroOgawa/pytorch_advanced/issues/160
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
"""pytorch_advanced 5-1-2 DCGAN: the "transposed convolution example" sets the kernel of a fresh
nn.Conv2d / nn.ConvTranspose2d element by element (m.weight[0, 0, 0, 0] = 1, ...) before the DCGAN
Generator and Discriminator are built and trained. The weight is a Parameter (a leaf that requires grad),
so the indexed assignment fails.

Written for bench/holdout8 with the structure of the book's notebook (the demonstration cells as helper
functions, then the book's Generator / Discriminator and one epoch of training on random 64x64 images).

Twin: the fix given in the thread (and adopted by the author): write through m.weight.data[...].
"""
import torch
import torch.nn as nn


def conv_example():
    print("normal convolution")
    m = nn.Conv2d(1, 1, 2, stride=1, bias=False)
    m.weight.data[0, 0, 0, 0] = 1
    m.weight.data[0, 0, 0, 1] = 2
    m.weight.data[0, 0, 1, 0] = 3
    m.weight.data[0, 0, 1, 1] = 4
    x = torch.arange(1.0, 10.0).view(1, 1, 3, 3)
    print(m(x))


def transposed_conv_example():
    print("transposed convolution")
    m = nn.ConvTranspose2d(1, 1, 2, stride=1, bias=False)
    m.weight.data[0, 0, 0, 0] = 1
    m.weight.data[0, 0, 0, 1] = 2
    m.weight.data[0, 0, 1, 0] = 3
    m.weight.data[0, 0, 1, 1] = 4
    x = torch.arange(1.0, 5.0).view(1, 1, 2, 2)
    print(m(x))


class Generator(nn.Module):
    def __init__(self, z_dim=20, image_size=64):
        super().__init__()
        self.layer1 = nn.Sequential(nn.ConvTranspose2d(z_dim, image_size * 8, kernel_size=4, stride=1),
                                    nn.BatchNorm2d(image_size * 8), nn.ReLU(inplace=True))
        self.layer2 = nn.Sequential(nn.ConvTranspose2d(image_size * 8, image_size * 4, 4, 2, 1),
                                    nn.BatchNorm2d(image_size * 4), nn.ReLU(inplace=True))
        self.layer3 = nn.Sequential(nn.ConvTranspose2d(image_size * 4, image_size * 2, 4, 2, 1),
                                    nn.BatchNorm2d(image_size * 2), nn.ReLU(inplace=True))
        self.layer4 = nn.Sequential(nn.ConvTranspose2d(image_size * 2, image_size, 4, 2, 1),
                                    nn.BatchNorm2d(image_size), nn.ReLU(inplace=True))
        self.last = nn.Sequential(nn.ConvTranspose2d(image_size, 1, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        out = self.layer4(self.layer3(self.layer2(self.layer1(z))))
        return self.last(out)


class Discriminator(nn.Module):
    def __init__(self, image_size=64):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(1, image_size, 4, 2, 1), nn.LeakyReLU(0.1, inplace=True))
        self.layer2 = nn.Sequential(nn.Conv2d(image_size, image_size * 2, 4, 2, 1), nn.LeakyReLU(0.1, inplace=True))
        self.layer3 = nn.Sequential(nn.Conv2d(image_size * 2, image_size * 4, 4, 2, 1), nn.LeakyReLU(0.1, inplace=True))
        self.layer4 = nn.Sequential(nn.Conv2d(image_size * 4, image_size * 8, 4, 2, 1), nn.LeakyReLU(0.1, inplace=True))
        self.last = nn.Conv2d(image_size * 8, 1, kernel_size=4, stride=1)

    def forward(self, x):
        out = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.last(out)


def train_model(G, D, dataloader, num_epochs=1, z_dim=20):
    g_optimizer = torch.optim.Adam(G.parameters(), 0.0001, [0.0, 0.9])
    d_optimizer = torch.optim.Adam(D.parameters(), 0.0004, [0.0, 0.9])
    criterion = nn.BCEWithLogitsLoss(reduction="mean")
    G.train()
    D.train()
    for epoch in range(num_epochs):
        epoch_g_loss = 0.0
        epoch_d_loss = 0.0
        for imges in dataloader:
            mini_batch_size = imges.size(0)
            label_real = torch.full((mini_batch_size,), 1.0)
            label_fake = torch.full((mini_batch_size,), 0.0)

            d_out_real = D(imges)
            input_z = torch.randn(mini_batch_size, z_dim).view(mini_batch_size, z_dim, 1, 1)
            fake_images = G(input_z)
            d_out_fake = D(fake_images.detach())
            d_loss = criterion(d_out_real.view(-1), label_real) + criterion(d_out_fake.view(-1), label_fake)
            d_optimizer.zero_grad()
            d_loss.backward()
            d_optimizer.step()

            input_z = torch.randn(mini_batch_size, z_dim).view(mini_batch_size, z_dim, 1, 1)
            fake_images = G(input_z)
            d_out_fake = D(fake_images)
            g_loss = criterion(d_out_fake.view(-1), label_real)
            g_optimizer.zero_grad()
            g_loss.backward()
            g_optimizer.step()

            epoch_d_loss += d_loss.item()
            epoch_g_loss += g_loss.item()
        print(f"epoch {epoch} D loss {epoch_d_loss:.4f} G loss {epoch_g_loss:.4f}")
    return G, D


def main():
    torch.manual_seed(0)
    conv_example()
    transposed_conv_example()
    G = Generator(z_dim=20, image_size=8)
    D = Discriminator(image_size=8)
    dataloader = [torch.rand(4, 1, 64, 64) * 2 - 1 for _ in range(2)]
    train_model(G, D, dataloader, num_epochs=1)


if __name__ == "__main__":
    main()
