# source: https://pytroubles.com/ru/posts/id2658-gan-v-pytorch-ispravljaem-oshibku-backward-cherez-detach
# symptom: Trying to backward through the graph a second time
# A GAN that updates the Generator n times per Discriminator step: the last fake_batch = netG(z) was already
# backpropagated (and freed) by g_loss.backward(); the Discriminator loss then reuses fake_batch without .detach()
# and its backward runs into the freed generator graph. The fix: netD(fake_batch.detach()).
import torch
import torch.nn as nn

torch.manual_seed(0)
dev = torch.device("cpu")
latent_dim = 16
netG = nn.Sequential(nn.Linear(latent_dim, 64), nn.ReLU(), nn.Linear(64, 784), nn.Tanh()).to(dev)
netD = nn.Sequential(nn.Linear(784, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1), nn.Sigmoid()).to(dev)
bce_loss = nn.BCELoss()
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
g_update_factor, d_update_factor = 2, 1
data_stream = [(torch.rand(8, 1, 28, 28), None) for _ in range(2)]
total_epochs = 1

for epoch in range(total_epochs):
    for batch_id, (real_batch, _) in enumerate(data_stream):
        real_batch = real_batch.view(-1, 784).to(dev)
        bsz = real_batch.shape[0]
        # Generator updates (n times)
        for _ in range(g_update_factor):
            z = torch.randn(bsz, latent_dim).to(dev)
            fake_batch = netG(z)
            gen_scores = netD(fake_batch).view(-1)
            g_loss = bce_loss(gen_scores, torch.ones_like(gen_scores))
            g_loss.backward()
            optG.step()
            netG.zero_grad()
        # Discriminator updates (m times)
        for _ in range(d_update_factor):
            netD.zero_grad()
            real_scores = netD(real_batch).view(-1)
            fake_scores = netD(fake_batch).view(-1)
            d_loss = bce_loss(real_scores, torch.ones_like(real_scores)) + bce_loss(fake_scores, torch.zeros_like(fake_scores))
            d_loss.backward()  # expect: AG017
            optD.step()
        print(f"epoch {epoch} batch {batch_id} g_loss {g_loss.item():.3f} d_loss {d_loss.item():.3f}")
