# source: https://github.com/psh01087/Vid-ODE/issues/6
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Vid-ODE training: the generator's adversarial loss is built through both discriminators, then the
discriminators are updated (optimizer_netD.step()) before loss_netG.backward() runs through them.

Written for bench/holdout8 with the structure of the report's main.py / models/gan.py (a small
frame-prediction generator stands in for the ODE-GRU; images are 16x16, torch + stdlib only).
"""
import random

import torch
import torch.nn as nn
import torch.optim as optim


class Opt:
    lamb_adv = 0.003
    lr = 1e-3
    epoch = 2
    sample_size = 4
    extrap = True
    irregular = False
    log_print_freq = 2


class ConvNormAct(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, padding, act_type="relu"):
        super().__init__()
        layers = [nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding), nn.InstanceNorm2d(out_ch)]
        if act_type == "relu":
            layers += [nn.ReLU()]
        elif act_type == "lrelu":
            layers += [nn.LeakyReLU(0.2)]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self, in_ch, device, seq=False, is_extrap=True):
        super().__init__()
        self.device = device
        self.seq = seq
        self.is_extrap = is_extrap
        self.layer_1 = nn.Sequential(nn.Conv2d(in_ch, 8, 4, 2, 1, bias=False), nn.LeakyReLU(0.2))
        self.layer_2 = ConvNormAct(8, 16, 4, 2, 1, act_type="lrelu")
        self.last_conv = nn.Conv2d(16, 4, 3, 1, 1, bias=False)

    def forward(self, x):
        return self.last_conv(self.layer_2(self.layer_1(x)))

    def rearrange_seq(self, real, fake, input_real, only_fake=True):
        b, t, c, h, w = fake.size()
        fake_seqs = [torch.cat([input_real[:, i:, ...], fake[:, :i + 1, ...]], dim=1) for i in range(t)]
        fake_seqs = torch.cat(fake_seqs, dim=0).view(b * t, -1, h, w)
        if only_fake:
            return fake_seqs
        real_seqs = [torch.cat([input_real[:, i:, ...], real[:, :i + 1, ...]], dim=1) for i in range(t)]
        real_seqs = torch.cat(real_seqs, dim=0).view(b * t, -1, h, w)
        return real_seqs, fake_seqs

    def netD_adv_loss(self, real, fake, input_real):
        if self.seq:
            real, fake = self.rearrange_seq(real, fake, input_real, only_fake=False)
        else:
            b, t, c, h, w = fake.size()
            real = real.contiguous().view(-1, c, h, w)
            fake = fake.contiguous().view(-1, c, h, w)
        pred_fake = self.forward(fake.detach())
        pred_real = self.forward(real)
        real_label = torch.ones_like(pred_real)
        loss_fake = torch.mean(pred_fake ** 2)
        loss_real = torch.mean((pred_real - real_label) ** 2)
        return (loss_real + loss_fake) * 0.5

    def netG_adv_loss(self, fake, input_real):
        b, t, c, h, w = fake.size()
        if self.seq:
            fake = self.rearrange_seq(None, fake, input_real, only_fake=True)
        else:
            fake = fake.contiguous().view(-1, c, h, w)
        pred_fake = self.forward(fake)
        real_label = torch.ones_like(pred_fake)
        return torch.mean((pred_fake - real_label) ** 2)


def create_netD(opt, device):
    seq_len = opt.sample_size // 2
    if opt.extrap:
        seq_len += 1
    netD_img = Discriminator(in_ch=3, device=device, seq=False, is_extrap=opt.extrap).to(device)
    netD_seq = Discriminator(in_ch=3 * seq_len, device=device, seq=True, is_extrap=opt.extrap).to(device)
    optimizer_netD = optim.Adamax(list(netD_img.parameters()) + list(netD_seq.parameters()), lr=opt.lr)
    return netD_img, netD_seq, optimizer_netD


class VidODE(nn.Module):
    """Stand-in for the ODE-GRU encoder/decoder: predicts the next frames from the observed ones."""

    def __init__(self, opt, device):
        super().__init__()
        self.opt = opt
        self.device = device
        self.encoder = ConvNormAct(3, 8, 3, 1, 1)
        self.decoder = nn.Conv2d(8, 3, 3, 1, 1)

    def forward(self, observed):
        b, t, c, h, w = observed.size()
        z = self.encoder(observed.reshape(b * t, c, h, w))
        return torch.tanh(self.decoder(z)).view(b, t, c, h, w)

    def compute_all_losses(self, batch_dict):
        pred_y = self(batch_dict["observed_data"])
        loss = torch.mean((pred_y - batch_dict["data_to_predict"]) ** 2)
        return {"loss": loss, "pred_y": pred_y}


def get_next_batch(batch_size, t, device):
    observed = torch.rand(batch_size, t, 3, 16, 16, device=device) * 2 - 1
    to_predict = torch.roll(observed, shifts=1, dims=4)
    return {"observed_data": observed, "data_to_predict": to_predict}


def train(opt, netG, n_train_batches, device):
    optimizer_netG = optim.Adamax(netG.parameters(), lr=opt.lr)
    netD_img, netD_seq, optimizer_netD = create_netD(opt, device)
    t = opt.sample_size // 2
    total_step = 0
    for epoch in range(opt.epoch):
        for it in range(n_train_batches):
            batch_dict = get_next_batch(2, t, device)
            res = netG.compute_all_losses(batch_dict)
            loss_netG = res["loss"]

            real = batch_dict["data_to_predict"]
            fake = res["pred_y"]
            input_real = batch_dict["observed_data"]

            loss_netD = opt.lamb_adv * netD_seq.netD_adv_loss(real, fake, input_real)
            loss_netD += opt.lamb_adv * netD_img.netD_adv_loss(real, fake, None)

            loss_adv_netG = opt.lamb_adv * netD_seq.netG_adv_loss(fake, input_real)
            loss_adv_netG += opt.lamb_adv * netD_img.netG_adv_loss(fake, None)
            loss_netG += loss_adv_netG

            # Train D
            optimizer_netD.zero_grad()
            loss_netD.backward()
            optimizer_netD.step()

            # Train G
            optimizer_netG.zero_grad()
            loss_netG.backward()  # expect: AG017
            optimizer_netG.step()

            if (total_step + 1) % opt.log_print_freq == 0:
                print(f"Epoch [{epoch:03d}] Iterations [{total_step + 1:4d}] Mse [{res['loss'].item():.4f}] "
                      f"Adv_G [{loss_adv_netG.item():.4f}] Adv_D [{loss_netD.item():.4f}]")
            total_step += 1


def main():
    random.seed(0)
    torch.manual_seed(0)
    opt = Opt()
    device = torch.device("cpu")
    model = VidODE(opt, device)
    train(opt, model, n_train_batches=3, device=device)
    print("training finished")


if __name__ == "__main__":
    main()
