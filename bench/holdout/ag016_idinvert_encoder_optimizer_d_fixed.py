# source: https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1
# symptom: discriminator gradients accumulated across \d+ steps: True
# Clean twin: the author's fix, optimizer_D.zero_grad() before D's backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, w_dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, w_dim))

    def forward(self, x):
        return self.net(x)


class Generator(nn.Module):
    def __init__(self, w_dim=8):
        super().__init__()
        self.net = nn.Linear(w_dim, 3 * 8 * 8)

    def forward(self, w):
        return torch.tanh(self.net(w)).view(-1, 3, 8, 8)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def training_loop(E, G, D, dataloader, lr=1e-4):
    for p in G.parameters():
        p.requires_grad_(False)
    optimizer_E = torch.optim.Adam(E.parameters(), lr=lr)
    optimizer_D = torch.optim.Adam(D.parameters(), lr=lr)
    fresh, stale = [], []
    D.net[1].weight.register_hook(lambda g: fresh.append(g.clone()))
    for it, x_real in enumerate(dataloader):
        # ---- update D ----
        optimizer_D.zero_grad()
        x_rec = G(E(x_real)).detach()
        loss_d = F.softplus(D(x_rec)).mean() + F.softplus(-D(x_real)).mean()
        loss_d.backward()
        stale.append(not torch.allclose(D.net[1].weight.grad, fresh[-1]))
        optimizer_D.step()
        # ---- update E ----
        optimizer_E.zero_grad()
        x_rec = G(E(x_real))
        loss_e = F.mse_loss(x_rec, x_real) + 0.1 * F.softplus(-D(x_rec)).mean()
        loss_e.backward()
        optimizer_E.step()
        print(f"iter {it}: loss_d {loss_d.item():.4f} loss_e {loss_e.item():.4f}")
    # D's .grad after its own backward differs from that backward's gradient: older ones were added in
    print(f"discriminator gradients accumulated across {len(stale)} steps: {any(stale)}")


training_loop(Encoder(), Generator(), Discriminator(), [torch.rand(4, 3, 8, 8) * 2 - 1 for _ in range(4)])
