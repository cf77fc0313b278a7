# source: https://github.com/leftthomas/SRGAN/issues/79
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# train.py computes fake_out = netD(fake_img).mean() once, backs d_loss through it (retain_graph=True), steps
# optimizerD, then builds g_loss from the same fake_out: g_loss.backward() needs netD's old weights (PyTorch >= 1.5).
import torch
import torch.optim as optim

from srgan_lib.loss import GeneratorLoss
from srgan_lib.model import Discriminator, Generator

torch.manual_seed(0)

UPSCALE_FACTOR = 2
NUM_EPOCHS = 1
train_loader = [(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 16, 16)) for _ in range(2)]

netG = Generator(UPSCALE_FACTOR)
netD = Discriminator()
generator_criterion = GeneratorLoss()
optimizerG = optim.Adam(netG.parameters())
optimizerD = optim.Adam(netD.parameters())

for epoch in range(1, NUM_EPOCHS + 1):
    running_results = {"batch_sizes": 0, "d_loss": 0, "g_loss": 0}
    netG.train()
    netD.train()
    for data, target in train_loader:
        batch_size = data.size(0)
        running_results["batch_sizes"] += batch_size
        ############################
        # (1) Update D network: maximize D(x)-1-D(G(z))
        ###########################
        real_img = target
        z = data
        fake_img = netG(z)

        netD.zero_grad()
        real_out = netD(real_img).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        optimizerD.step()

        ############################
        # (2) Update G network: minimize 1-D(G(z)) + Perception Loss + Image Loss + TV Loss
        ###########################
        netG.zero_grad()
        g_loss = generator_criterion(fake_out, fake_img, real_img)
        g_loss.backward()  # expect: AG017
        optimizerG.step()

        running_results["g_loss"] += g_loss.item() * batch_size
        running_results["d_loss"] += d_loss.item() * batch_size
        print("Loss_D: %.4f Loss_G: %.4f" % (running_results["d_loss"] / running_results["batch_sizes"],
                                           running_results["g_loss"] / running_results["batch_sizes"]))
