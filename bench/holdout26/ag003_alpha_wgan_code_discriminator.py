# source: https://github.com/cyclomon/3dbraingen/issues/16 (pattern: Alpha-WGAN loop backprops the encoder/generator loss with retain_graph=True, steps E and G, then reuses the retained c_loss inside the code-discriminator loss)
# symptom: modified by an inplace operation
"""Alpha-WGAN style step on toy vectors: encoder E, generator G, discriminator D, code discriminator CD."""
import torch
import torch.nn as nn

torch.manual_seed(0)
LATENT, DATA = 4, 16


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 32), nn.LeakyReLU(0.2), nn.Linear(32, o))


E, G, D, CD = mlp(DATA, LATENT), mlp(LATENT, DATA), mlp(DATA, 1), mlp(LATENT, 1)
e_optimizer = torch.optim.Adam(E.parameters(), lr=2e-4)
g_optimizer = torch.optim.Adam(G.parameters(), lr=2e-4)
d_optimizer = torch.optim.Adam(D.parameters(), lr=2e-4)
cd_optimizer = torch.optim.Adam(CD.parameters(), lr=2e-4)


def set_grad(net, flag):
    for p in net.parameters():
        p.requires_grad = flag


for iteration in range(3):
    real_images = torch.randn(8, DATA)

    # --- train encoder / generator ---
    set_grad(D, False)
    set_grad(CD, False)
    set_grad(E, True)
    set_grad(G, True)
    e_optimizer.zero_grad()
    g_optimizer.zero_grad()
    z_hat = E(real_images)
    x_hat = G(z_hat)
    z_rand = torch.randn(8, LATENT)
    x_rand = G(z_rand)
    c_loss = -CD(z_hat).mean()
    d_loss = -D(x_rand).mean() - D(x_hat).mean()
    l1_loss = 10 * (x_hat - real_images).abs().mean()
    loss1 = l1_loss + c_loss + d_loss
    loss1.backward(retain_graph=True)  # expect: AG003
    e_optimizer.step()
    g_optimizer.step()

    # --- train code discriminator ---
    set_grad(E, False)
    set_grad(CD, True)
    cd_optimizer.zero_grad()
    loss3 = -CD(z_rand).mean() - c_loss
    loss3.backward(retain_graph=True)  # expect: AG003
    cd_optimizer.step()
    print(f"iter {iteration} loss1 {loss1.item():.4f} loss3 {loss3.item():.4f}")
