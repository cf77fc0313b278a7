# source: https://github.com/ajbrock/BigGAN-PyTorch/issues/25
# symptom: D gradients carried over between D steps: True
"""BigGAN-PyTorch `GAN_training_function`, fixed as the maintainer fixed it: `D.optim.zero_grad()` is called at the start
of every D step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, dim_z=8, n_classes=4):
        super().__init__()
        self.shared = nn.Embedding(n_classes, dim_z)
        self.net = nn.Sequential(nn.Linear(dim_z, 32), nn.ReLU(), nn.Linear(32, 16))
        self.optim = torch.optim.Adam(self.parameters(), lr=1e-4, betas=(0.0, 0.999))

    def forward(self, z, y):
        return torch.tanh(self.net(z + self.shared(y)))


class Discriminator(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.linear = nn.Linear(32, 1)
        self.embed = nn.Embedding(n_classes, 32)
        self.optim = torch.optim.Adam(self.parameters(), lr=4e-4, betas=(0.0, 0.999))

    def forward(self, x, y):
        h = self.net(x)
        return self.linear(h) + torch.sum(self.embed(y) * h, 1, keepdim=True)


class G_D(nn.Module):
    def __init__(self, G, D):
        super().__init__()
        self.G, self.D = G, D

    def forward(self, z, gy, x=None, dy=None, train_G=False):
        with torch.set_grad_enabled(train_G):
            G_z = self.G(z, gy)
        if x is not None:
            D_input = torch.cat([G_z, x], 0)
            D_class = torch.cat([gy, dy], 0)
            D_out = self.D(D_input, D_class)
            return torch.split(D_out, [G_z.shape[0], x.shape[0]])
        return self.D(G_z, gy)


def discriminator_loss(dis_fake, dis_real):
    return torch.mean(F.relu(1. - dis_real)), torch.mean(F.relu(1. + dis_fake))


def generator_loss(dis_fake):
    return -torch.mean(dis_fake)


def toggle_grad(model, on_or_off):
    for param in model.parameters():
        param.requires_grad = on_or_off


def GAN_training_function(G, D, GD, z_, y_, config, grad_log):
    def train(x, y):
        G.optim.zero_grad()
        D.optim.zero_grad()
        x = torch.split(x, config['batch_size'])
        y = torch.split(y, config['batch_size'])
        counter = 0
        if config['toggle_grads']:
            toggle_grad(D, True)
            toggle_grad(G, False)
        for step_index in range(config['num_D_steps']):
            D.optim.zero_grad()
            grad_log.append(any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in D.parameters()))
            # If accumulating gradients, loop multiple times before an optimizer step
            for accumulation_index in range(config['num_D_accumulations']):
                z_.normal_()
                y_.random_(0, config['n_classes'])
                D_fake, D_real = GD(z_[:config['batch_size']], y_[:config['batch_size']], x[counter], y[counter],
                                    train_G=False)
                D_loss_real, D_loss_fake = discriminator_loss(D_fake, D_real)
                D_loss = (D_loss_real + D_loss_fake) / float(config['num_D_accumulations'])
                D_loss.backward()
                counter += 1
            D.optim.step()

        if config['toggle_grads']:
            toggle_grad(D, False)
            toggle_grad(G, True)
        # Zero G's gradients by default before training G, for safety
        G.optim.zero_grad()
        for accumulation_index in range(config['num_G_accumulations']):
            z_.normal_()
            y_.random_(0, config['n_classes'])
            D_fake = GD(z_, y_, train_G=True)
            G_loss = generator_loss(D_fake) / float(config['num_G_accumulations'])
            G_loss.backward()
        G.optim.step()
        return {'G_loss': float(G_loss.item()), 'D_loss_real': float(D_loss_real.item()),
                'D_loss_fake': float(D_loss_fake.item())}
    return train


config = {'batch_size': 8, 'num_D_steps': 2, 'num_D_accumulations': 1, 'num_G_accumulations': 1,
          'toggle_grads': True, 'n_classes': 4}
G, D = Generator(), Discriminator()
GD = G_D(G, D)
z_, y_ = torch.zeros(config['batch_size'], 8), torch.zeros(config['batch_size'], dtype=torch.long)
grad_log = []
train = GAN_training_function(G, D, GD, z_, y_, config, grad_log)
data = torch.randn(64, 16)
labels = torch.randint(0, config['n_classes'], (64,))
chunk = config['batch_size'] * config['num_D_steps'] * config['num_D_accumulations']
for i in range(0, 64, chunk):
    metrics = train(data[i:i + chunk], labels[i:i + chunk])
print(', '.join('%s : %+4.3f' % (key, metrics[key]) for key in metrics))
print(f"D gradients carried over between D steps: {any(grad_log)}")
