# source: https://github.com/navneet-nmk/pytorch-rl/commit/a6a3252785046326b5b85651fa2b3252375d0789
# symptom: gradients carried over from the previous step: True
"""navneet-nmk/pytorch-rl models/infogan.py after "Fixed an important bug" (fixed): the generator
and recognizer part starts with `self.gen_optim.zero_grad()`, so `G_loss.backward()` writes only
this iteration's gradients before `self.gen_optim.step()`."""
import random

import torch
import torch.nn as nn
from torch.optim import Adam


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 3 * 8 * 8), nn.Tanh())

    def forward(self, z):
        return self.net(z).view(-1, 3, 8, 8)


class Discriminator(nn.Module):
    """shared trunk with the real/fake head and the recognizer (Q) heads"""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 64), nn.LeakyReLU(0.1))
        self.d_head = nn.Sequential(nn.Linear(64, 1), nn.Sigmoid())
        self.cat_head = nn.Linear(64, 10)
        self.cont_head = nn.Linear(64, 2)

    def forward(self, x):
        h = self.trunk(x)
        return self.d_head(h).squeeze(1), self.cat_head(h), self.cont_head(h)


class InfoGAN(object):
    def __init__(self, generator, discriminator, dataset, num_epochs, generator_lr, discriminator_lr, batch_size):
        self.batch_size = batch_size
        self.num_epochs = num_epochs
        self.dataset = dataset
        self.generator = generator
        self.discriminator = discriminator
        self.gen_optim = Adam(self.generator.parameters(), lr=generator_lr)
        self.dis_optim = Adam(self.discriminator.parameters(), lr=discriminator_lr)

    def get_dataloader(self):
        return [{'image': img} for img in self.dataset]

    def loss(self):
        return nn.BCELoss(), nn.CrossEntropyLoss(), nn.MSELoss()

    def _noise_sample(self, cat_c, con_c, noise, bs):
        idx = [random.randrange(10) for _ in range(bs)]
        c = torch.zeros(bs, 10)
        c[range(bs), idx] = 1.0
        cat_c.data.copy_(c)
        con_c.data.uniform_(-1.0, 1.0)
        noise.data.uniform_(-1.0, 1.0)
        z = torch.cat([noise, cat_c, con_c], 1).view(-1, 128)
        return z, idx

    def train(self):
        labels = torch.zeros(self.batch_size)
        cat_c = torch.zeros(self.batch_size, 10)
        con_c = torch.zeros(self.batch_size, 2)
        noise = torch.zeros(self.batch_size, 116)
        criterionD, criterion_cat, criterion_cont = self.loss()
        carried = False
        for epoch in range(self.num_epochs):
            std = 1.0
            for num_iters, batch_data in enumerate(self.get_dataloader()):
                # Real Part
                self.dis_optim.zero_grad()
                x = batch_data['image']
                bs = x.size(0)
                noise_data = torch.normal(mean=torch.zeros(x.shape), std=std)
                x += noise_data
                d_output, recog_cat, recog_cont = self.discriminator(x)
                labels.data.fill_(1)
                loss_real = criterionD(d_output, labels)
                loss_real.backward()
                # Fake Part
                z, idx = self._noise_sample(cat_c, con_c, noise, bs)
                fake_x = self.generator(z)
                fake_x = fake_x + noise_data
                d_output, recog_cat, recog_cont = self.discriminator(fake_x.detach())
                labels.data.fill_(0)
                loss_fake = criterionD(d_output, labels)
                loss_fake.backward()
                D_loss = loss_real + loss_fake
                self.dis_optim.step()
                # Generator and Recognizer Part
                self.gen_optim.zero_grad()

                d_output, recog_cat, recog_cont = self.discriminator(fake_x)
                labels.data.fill_(1.0)
                reconstruct_loss = criterionD(d_output, labels)
                target = torch.LongTensor(idx)
                cont_loss = criterion_cont(recog_cont, con_c) * 0.1
                cat_loss = criterion_cat(recog_cat, target) * 1
                G_loss = reconstruct_loss + cont_loss + cat_loss
                g_param = self.generator.net[2].bias
                before = g_param.grad
                fresh = torch.autograd.grad(G_loss, g_param, retain_graph=True)[0]
                G_loss.backward()
                if before is not None and before.abs().sum() > 0:
                    carried = carried or not torch.allclose(g_param.grad, fresh)
                self.gen_optim.step()
            print('Epoch:{0}, Dloss: {1:.4f}, Gloss: {2:.4f}'.format(epoch, D_loss.item(), G_loss.item()))
        print('gradients carried over from the previous step:', carried)


def main():
    torch.manual_seed(0)
    random.seed(0)
    dataset = [torch.rand(4, 3, 8, 8) * 2 - 1 for _ in range(3)]
    gan = InfoGAN(Generator(), Discriminator(), dataset, num_epochs=2, generator_lr=2e-4,
                  discriminator_lr=2e-4, batch_size=4)
    gan.train()


if __name__ == '__main__':
    main()
