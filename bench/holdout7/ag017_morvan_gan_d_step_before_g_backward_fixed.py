# source: https://github.com/pytorch/pytorch/issues/39141
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Twin (the fix from the thread, albanD's answer, merged in the tutorial as MorvanZhou/PyTorch-Tutorial#91: train G
first on its own forward, then D on `G_paintings.detach()`; the now useless `retain_graph=True` is dropped). The "fit sin(x)" GAN of the issue (MorvanZhou's
406_GAN tutorial): one forward `prob_artist1 = D(G_paintings)` fed both `D_loss` and `G_loss`, and
`G_loss.backward()` ran after `opt_D.step()`."""
import math

import torch
import torch.nn as nn

torch.manual_seed(1)

# Hyper Parameters
BATCH_SIZE = 16
LR_G = 0.0001
LR_D = 0.0001
N_IDEAS = 5
ART_COMPONENTS = 15
PAINT_POINTS = torch.linspace(-1, 1, ART_COMPONENTS).repeat(BATCH_SIZE, 1)


def artist_works():  # painting from the famous artist (real target)
    r = 0.02 * torch.randn(1, ART_COMPONENTS)
    paintings = torch.sin(PAINT_POINTS * math.pi) + r
    return paintings


G = nn.Sequential(  # Generator
    nn.Linear(N_IDEAS, 128),  # random ideas (could from normal distribution)
    nn.ReLU(),
    nn.Linear(128, ART_COMPONENTS),  # making a painting from these random ideas
)

D = nn.Sequential(  # Discriminator
    nn.Linear(ART_COMPONENTS, 128),  # receive art work either from the famous artist or a newbie like G
    nn.ReLU(),
    nn.Linear(128, 1),
    nn.Sigmoid(),  # tell the probability that the art work is made by artist
)

opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)

for step in range(5):
    artist_paintings = artist_works()  # real painting from artist
    G_ideas = torch.randn(BATCH_SIZE, N_IDEAS)  # random ideas
    G_paintings = G(G_ideas)  # fake painting from G (random ideas)

    prob_artist1 = D(G_paintings)  # G tries to fool D
    G_loss = torch.mean(torch.log(1.0 - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

    prob_artist0 = D(artist_paintings)  # D try to increase this prob
    prob_artist1 = D(G_paintings.detach())  # D try to reduce this prob
    D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1.0 - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward()
    opt_D.step()

    print(f"step {step} | D accuracy {prob_artist0.mean().item():.3f} | D score {-D_loss.item():.3f}")
