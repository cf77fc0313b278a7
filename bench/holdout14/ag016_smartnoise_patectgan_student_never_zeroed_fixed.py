"""PATE-CTGAN with the student discriminator's gradients zeroed before each student update (clean twin).

`PATECTGAN.train` (smartnoise-sdk) trains the teacher discriminators with `optimizerT[i].zero_grad()`, and the
generator with `optimizerG.zero_grad()`, but the student loop only does `loss_s.backward(); optimizerS.step()`. The
student's gradients pile up across student iterations (and the generator's backward through the student adds to them
as well), so each student step applies the sum of every earlier step's gradient.

Clean twin: the fix that closed the issue (commit "bug fix - add zero grad to student loss"):
`optimizerS.zero_grad()` before `loss_s.backward()`.
"""
# source: https://github.com/opendp/smartnoise-sdk/issues/280
# symptom: gradients carried over from the previous step: True
import math

import torch
import torch.nn as nn
from torch import optim


class Generator(nn.Module):
    def __init__(self, embedding_dim, data_dim):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(embedding_dim, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, data_dim))

    def forward(self, z):
        return self.seq(z)


class Discriminator(nn.Module):
    def __init__(self, data_dim):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(data_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.seq(x).view(-1)


def weights_init(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0.0, 0.02)
        nn.init.zeros_(m.bias)


def pate(data, teachers, lap_scale):
    """Noisy vote of the teachers on `data`: the student's labels."""
    votes = torch.stack([(t(data) > 0.5).float() for t in teachers]).sum(0)
    noisy = votes + torch.distributions.Laplace(0.0, 1.0 / lap_scale).sample(votes.shape)
    return (noisy > len(teachers) / 2).float(), votes


def moments_acc(num_teachers, votes, lap_scale, l_list):
    q = (2 + lap_scale * torch.abs(2 * votes - num_teachers)) / (4 * torch.exp(lap_scale * torch.abs(2 * votes - num_teachers)))
    alpha = [torch.clamp(2 * lap_scale ** 2 * l * (l + 1), max=torch.log((1 - q) * ((1 - q) / (1 - math.exp(2 * lap_scale) * q)) ** l + q * math.exp(2 * lap_scale * l)).sum().item()) for l in l_list]
    return torch.tensor([a.sum().item() if torch.is_tensor(a) else a for a in alpha])


class PATECTGAN:
    def __init__(self, embedding_dim=8, batch_size=32, num_teachers=3, teacher_iters=2, student_iters=3, epsilon=2.0, delta=1e-5):
        self.embedding_dim = embedding_dim
        self.batch_size = batch_size
        self.num_teachers = num_teachers
        self.teacher_iters = teacher_iters
        self.student_iters = student_iters
        self.epsilon = epsilon
        self.delta = delta
        self.carried_over = False

    def sample_real(self, partition):
        return partition[torch.randint(0, partition.shape[0], (self.batch_size,))]

    def train(self, data):
        data_dim = data.shape[1]
        partitions = torch.chunk(data[torch.randperm(data.shape[0])], self.num_teachers)
        self.generator = Generator(self.embedding_dim, data_dim)
        student_disc = Discriminator(data_dim)
        student_disc.apply(weights_init)
        teacher_disc = [Discriminator(data_dim) for _ in range(self.num_teachers)]
        for t in teacher_disc:
            t.apply(weights_init)

        optimizerG = optim.Adam(self.generator.parameters(), lr=2e-4, betas=(0.5, 0.9))
        optimizerS = optim.Adam(student_disc.parameters(), lr=2e-4, betas=(0.5, 0.9))
        optimizerT = [optim.Adam(t.parameters(), lr=2e-4, betas=(0.5, 0.9)) for t in teacher_disc]
        criterion = nn.BCELoss()
        noise_multiplier = 1e-3
        alphas = torch.zeros(20)
        l_list = 1 + torch.arange(20)
        eps = 0.0
        mean = torch.zeros(self.batch_size, self.embedding_dim)
        std = mean + 1
        rounds = 0

        while eps < self.epsilon and rounds < 4:
            rounds += 1
            for _ in range(self.teacher_iters):
                for i in range(self.num_teachers):
                    fake = self.generator(torch.normal(mean, std=std))
                    real = self.sample_real(partitions[i])
                    optimizerT[i].zero_grad()
                    errD_fake = criterion(teacher_disc[i](fake.detach()), torch.zeros(self.batch_size))
                    errD_fake.backward()
                    optimizerT[i].step()
                    errD_real = criterion(teacher_disc[i](real), torch.ones(self.batch_size))
                    errD_real.backward()
                    optimizerT[i].step()

            for _ in range(self.student_iters):
                fake_data = self.generator(torch.normal(mean, std=std))
                with torch.no_grad():
                    predictions, votes = pate(fake_data, teacher_disc, noise_multiplier)
                output = student_disc(fake_data.detach())
                alphas = alphas + moments_acc(self.num_teachers, votes, noise_multiplier, l_list)
                loss_s = criterion(output, predictions)
                optimizerS.zero_grad()
                if any(p.grad is not None and p.grad.abs().sum() > 0 for p in student_disc.parameters()):
                    self.carried_over = True
                loss_s.backward()
                optimizerS.step()

            fake = self.generator(torch.normal(mean=mean, std=std))
            loss_g = criterion(student_disc(fake), torch.ones(self.batch_size))
            optimizerG.zero_grad()
            loss_g.backward()
            optimizerG.step()
            eps = min((alphas - math.log(self.delta)) / l_list).item()
            print(f"round {rounds} generator loss {loss_g.item():.4f}")


def main():
    torch.manual_seed(0)
    data = torch.cat([torch.randn(300, 3), (torch.rand(300, 3) > 0.5).float()], dim=1)
    model = PATECTGAN()
    model.train(data)
    print(f"gradients carried over from the previous step: {model.carried_over}")


if __name__ == "__main__":
    main()
