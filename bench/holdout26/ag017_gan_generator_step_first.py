# source: https://whosebug.com/question/5232549/How-does-PyTorch-s-loss-backward-work-when-retain-graph-True-is-specified (pattern: GAN loop updates the generator first (loss_g.backward, optim_g.step) and then backprops the discriminator loss computed on the same undetached fake batch)
# symptom: Trying to backward through the graph a second time
"""Adversarial training of a small generator/discriminator pair; generator step first, then discriminator."""
import torch
import torch.nn as nn

torch.manual_seed(0)
Z, X = 8, 2

generator = nn.Sequential(nn.Linear(Z, 32), nn.ReLU(), nn.Linear(32, X))
discriminator = nn.Sequential(nn.Linear(X, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
optim_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
optim_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()


def sample_real(n):
    angle = torch.rand(n) * 6.2832
    return torch.stack([angle.cos(), angle.sin()], dim=1)


for step in range(5):
    real = sample_real(32)
    fake = generator(torch.randn(32, Z))

    # computing loss_g and loss_d...
    loss_g = bce(discriminator(fake), torch.ones(32, 1))
    loss_d = bce(discriminator(real), torch.ones(32, 1)) + bce(discriminator(fake), torch.zeros(32, 1))

    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()

    optim_d.zero_grad()
    loss_d.backward()  # expect: AG017
    optim_d.step()
    print(f"step {step} loss_g {loss_g.item():.4f} loss_d {loss_d.item():.4f}")
