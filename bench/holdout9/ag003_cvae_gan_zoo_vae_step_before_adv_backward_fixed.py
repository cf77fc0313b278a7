# source: https://github.com/YixinChen-AI/CVAE-GAN-zoos-PyTorch-Beginner/issues/1
# symptom: modified by an inplace operation
"""Fixed twin: the thread gives no code (its answers are "downgrade to 1.4" or "change the code"; pull request #11
is not readable in the stored thread). As the code around it suggests, the VAE is stepped once, after both the VAE
loss and the adversarial loss have been backpropagated through the retained `recon_data` graph.
"""
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(88)
nz = 8
device = 'cpu'


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
            nn.BatchNorm2d(16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(16, 32, kernel_size=3, stride=2, padding=1),
            nn.BatchNorm2d(32),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(32, 32, kernel_size=3, stride=1, padding=1),
            nn.BatchNorm2d(32),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.encoder_fc1 = nn.Linear(32 * 7 * 7, nz)
        self.encoder_fc2 = nn.Linear(32 * 7 * 7, nz)
        self.decoder_fc = nn.Linear(nz, 32 * 7 * 7)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 4, 2, 1),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(16, 1, 4, 2, 1),
            nn.Sigmoid(),
        )

    def noise_reparameterize(self, mean, logvar):
        eps = torch.randn(mean.shape).to(device)
        z = mean + eps * torch.exp(logvar)
        return z

    def forward(self, x):
        out1, out2 = self.encoder(x), self.encoder(x)
        mean = self.encoder_fc1(out1.view(out1.shape[0], -1))
        logstd = self.encoder_fc2(out2.view(out2.shape[0], -1))
        z = self.noise_reparameterize(mean, logstd)
        out3 = self.decoder_fc(z)
        out3 = out3.view(out3.shape[0], 32, 7, 7)
        out3 = self.decoder(out3)
        return out3, mean, logstd


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.dis = nn.Sequential(
            nn.Conv2d(1, 32, 3, stride=1, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.MaxPool2d((2, 2)),
            nn.Conv2d(32, 64, 3, stride=1, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.MaxPool2d((2, 2)),
        )
        self.fc = nn.Sequential(
            nn.Linear(7 * 7 * 64, 64),
            nn.LeakyReLU(0.2, True),
            nn.Linear(64, 1),
            nn.Sigmoid()
        )

    def forward(self, input):
        x = self.dis(input)
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x.squeeze(1)


def loss_function(recon_x, x, mean, logstd):
    MSE = MSECriterion(recon_x, x)
    var = torch.pow(torch.exp(logstd), 2)
    KLD = -0.5 * torch.sum(1 + torch.log(var) - torch.pow(mean, 2) - var)
    return MSE + KLD


if __name__ == '__main__':
    batchSize = 16
    dataloader = [(torch.rand(batchSize, 1, 28, 28), torch.randint(0, 10, (batchSize,))) for _ in range(3)]

    vae = VAE().to(device)
    D = Discriminator().to(device)
    criterion = nn.BCELoss().to(device)
    MSECriterion = nn.MSELoss().to(device)
    optimizerD = optim.Adam(D.parameters(), lr=0.0001)
    optimizerVAE = optim.Adam(vae.parameters(), lr=0.0001)

    for epoch in range(1):
        for i, (data, label) in enumerate(dataloader, 0):
            # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
            D.zero_grad()
            data = data.to(device)
            batch_size = data.shape[0]
            output = D(data)
            real_label = torch.ones(batch_size).to(device)
            fake_label = torch.zeros(batch_size).to(device)
            errD_real = criterion(output, real_label)
            errD_real.backward()
            real_data_score = output.mean().item()

            z = torch.randn(batch_size, nz).to(device)
            fake_data = vae.decoder_fc(z).view(z.shape[0], 32, 7, 7)
            fake_data = vae.decoder(fake_data)
            output = D(fake_data)
            errD_fake = criterion(output, fake_label)
            errD_fake.backward()
            fake_data_score = output.data.mean()
            errD = errD_real + errD_fake
            optimizerD.step()

            # (2) Update G network which is the decoder of VAE
            recon_data, mean, logstd = vae(data)
            vae.zero_grad()
            vae_loss = loss_function(recon_data, data, mean, logstd)
            vae_loss.backward(retain_graph=True)

            # (3) Update G network: maximize log(D(G(z))); one VAE step after both backward calls
            real_label = torch.ones(batch_size).to(device)
            output = D(recon_data)
            errVAE = criterion(output, real_label)
            errVAE.backward()
            D_G_z2 = output.mean().item()
            optimizerVAE.step()

            print('[%d][%d] real_score: %.4f fake_score: %.4f Loss_D: %.4f'
                  % (epoch, i, real_data_score, fake_data_score, errD.item()))
