# source: https://github.com/AnjanDutta/sem-pcyc/issues/30
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""SEM-PCYC (sketch-based image retrieval) SEM_PCYC.backward: the autoencoder and the generators are
stepped (optimizer_ae.step(), optimizer_gen.step()) and then the three discriminator losses are
backpropagated through the same undetached forward outputs (se_em_enc, im2se_em, sk2se_em, se2sk_em,
se2im_em), whose graphs hold the weights the steps just changed.

Written for bench/holdout8 with the structure of the repository's src/models.py (forward() storing the
embeddings on self, backward() with the autoencoder, generator and discriminator phases,
optimize_params()); the VGG feature extractors are small linear layers and the data are random vectors.
"""
import torch
import torch.nn as nn
import torch.optim as optim


class GANLoss(nn.Module):
    def __init__(self, use_lsgan=True, target_real_label=1.0, target_fake_label=0.0):
        super().__init__()
        self.register_buffer("real_label", torch.tensor(target_real_label))
        self.register_buffer("fake_label", torch.tensor(target_fake_label))
        self.loss = nn.MSELoss() if use_lsgan else nn.BCELoss()

    def __call__(self, input, target_is_real):
        target = self.real_label if target_is_real else self.fake_label
        return self.loss(input, target.expand_as(input))


class AutoEncoder(nn.Module):
    def __init__(self, dim, hid_dim, nlayer=1):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, hid_dim), nn.ReLU())
        self.dec = nn.Sequential(nn.Linear(hid_dim, dim))

    def forward(self, x):
        enc_x = self.enc(x)
        return enc_x, self.dec(enc_x)


def generator(in_dim, out_dim):
    return nn.Sequential(nn.Linear(in_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, out_dim))


def discriminator(in_dim):
    return nn.Sequential(nn.Linear(in_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())


class SEM_PCYC(nn.Module):
    def __init__(self, params_model):
        super().__init__()
        self.dim_out = params_model["dim_out"]
        self.sem_dim = params_model["sem_dim"]
        self.num_clss = params_model["num_clss"]
        feat = 24
        self.sketch_model = nn.Sequential(nn.Linear(40, feat), nn.ReLU())
        self.image_model = nn.Sequential(nn.Linear(40, feat), nn.ReLU())
        self.aut_enc = AutoEncoder(self.sem_dim, self.dim_out)
        self.gen_sk2se = generator(feat, self.dim_out)
        self.gen_im2se = generator(feat, self.dim_out)
        self.gen_se2sk = generator(self.dim_out, feat)
        self.gen_se2im = generator(self.dim_out, feat)
        self.disc_se = discriminator(self.dim_out)
        self.disc_sk = discriminator(feat)
        self.disc_im = discriminator(feat)
        self.classifier_sk = nn.Linear(feat, self.num_clss)
        self.classifier_im = nn.Linear(feat, self.num_clss)
        self.classifier_se = nn.Linear(self.dim_out, self.num_clss)

        self.lr = params_model["lr"]
        list_gen = list(self.gen_sk2se.parameters()) + list(self.gen_im2se.parameters()) + \
            list(self.gen_se2sk.parameters()) + list(self.gen_se2im.parameters()) + \
            list(self.classifier_sk.parameters()) + list(self.classifier_im.parameters()) + \
            list(self.classifier_se.parameters()) + list(self.sketch_model.parameters()) + \
            list(self.image_model.parameters())
        list_disc = list(self.disc_se.parameters()) + list(self.disc_sk.parameters()) + \
            list(self.disc_im.parameters())
        self.optimizer_gen = optim.Adam(list_gen, lr=self.lr, betas=(0.5, 0.999))
        self.optimizer_disc = optim.SGD(list_disc, lr=self.lr, momentum=0.9)
        self.optimizer_ae = optim.SGD(self.aut_enc.parameters(), lr=100 * self.lr, momentum=0.9)

        self.lambda_se = params_model["lambda_se"]
        self.lambda_im = params_model["lambda_im"]
        self.lambda_sk = params_model["lambda_sk"]
        self.lambda_gen_cyc = params_model["lambda_gen_cyc"]
        self.lambda_gen_adv = params_model["lambda_gen_adv"]
        self.lambda_gen_cls = params_model["lambda_gen_cls"]
        self.lambda_gen_reg = params_model["lambda_gen_reg"]
        self.lambda_disc_se = params_model["lambda_disc_se"]
        self.lambda_disc_sk = params_model["lambda_disc_sk"]
        self.lambda_disc_im = params_model["lambda_disc_im"]
        self.lambda_regular = params_model["lambda_regular"]
        self.criterion_gan = GANLoss(use_lsgan=True)
        self.criterion_cyc = nn.L1Loss()
        self.criterion_cls = nn.CrossEntropyLoss()
        self.criterion_reg = nn.MSELoss()

    def forward(self, sk, im, se):
        self.sk_fe = self.sketch_model(sk)
        self.im_fe = self.image_model(im)
        self.se_em_enc, self.se_em_rec = self.aut_enc(se)

        self.im2se_em = self.gen_im2se(self.im_fe)
        self.sk2se_em = self.gen_sk2se(self.sk_fe)
        self.se2im_em = self.gen_se2im(self.se_em_enc.detach())
        self.se2sk_em = self.gen_se2sk(self.se_em_enc.detach())

        self.im_em_hat = self.gen_se2im(self.im2se_em)
        self.sk_em_hat = self.gen_se2sk(self.sk2se_em)
        self.se_em_hat1 = self.gen_sk2se(self.se2sk_em)
        self.se_em_hat2 = self.gen_im2se(self.se2im_em)

    def backward(self, se, cl):
        regularizer = 0
        if self.lambda_regular > 0:
            for l in range(len(self.aut_enc.enc)):
                if self.aut_enc.enc[l]._get_name() == "Linear":
                    regularizer = regularizer + torch.norm(self.aut_enc.enc[l].weight, 2, dim=0).sum()
        loss_aut_enc = self.criterion_reg(self.se_em_rec, se) + self.lambda_regular * regularizer / cl.shape[0]
        self.optimizer_ae.zero_grad()
        loss_aut_enc.backward(retain_graph=True)
        self.optimizer_ae.step()

        loss_gen_adv = self.criterion_gan(self.disc_se(self.im2se_em), True) + \
            self.criterion_gan(self.disc_se(self.sk2se_em), True) + \
            self.criterion_gan(self.disc_im(self.se2im_em), True) + \
            self.criterion_gan(self.disc_sk(self.se2sk_em), True)
        loss_gen_adv = self.lambda_gen_adv * loss_gen_adv

        loss_gen_cyc = self.lambda_im * self.criterion_cyc(self.im_em_hat, self.im_fe) + \
            self.lambda_sk * self.criterion_cyc(self.sk_em_hat, self.sk_fe) + \
            self.lambda_se * (self.criterion_cyc(self.se_em_hat1, self.se_em_enc.detach()) +
                              self.criterion_cyc(self.se_em_hat2, self.se_em_enc.detach()))
        loss_gen_cyc = self.lambda_gen_cyc * loss_gen_cyc

        loss_gen_cls = self.lambda_se * (self.criterion_cls(self.classifier_se(self.im2se_em), cl) +
                                         self.criterion_cls(self.classifier_se(self.sk2se_em), cl)) + \
            self.lambda_sk * self.criterion_cls(self.classifier_sk(self.se2sk_em), cl) + \
            self.lambda_im * self.criterion_cls(self.classifier_im(self.se2im_em), cl)
        loss_gen_cls = self.lambda_gen_cls * loss_gen_cls

        loss_gen_reg = self.lambda_se * (self.criterion_reg(self.im2se_em, self.sk2se_em) +
                                         self.criterion_reg(self.sk2se_em, self.im2se_em)) + \
            self.lambda_im * self.criterion_reg(self.se2im_em, self.im_fe) + \
            self.lambda_sk * self.criterion_reg(self.se2sk_em, self.sk_fe)
        loss_gen_reg = self.lambda_gen_reg * loss_gen_reg

        loss_gen = loss_gen_adv + loss_gen_cyc + loss_gen_cls + loss_gen_reg
        self.optimizer_gen.zero_grad()
        loss_gen.backward(retain_graph=True)
        self.optimizer_gen.step()

        self.optimizer_disc.zero_grad()

        loss_disc_se = 2 * self.criterion_gan(self.disc_se(self.se_em_enc), True) + \
            self.criterion_gan(self.disc_se(self.im2se_em), False) + \
            self.criterion_gan(self.disc_se(self.sk2se_em), False)
        loss_disc_se = self.lambda_disc_se * loss_disc_se
        loss_disc_se.backward(retain_graph=True)  # expect: AG017

        loss_disc_sk = self.criterion_gan(self.disc_sk(self.sk_fe), True) + \
            self.criterion_gan(self.disc_sk(self.se2sk_em), False)
        loss_disc_sk = self.lambda_disc_sk * loss_disc_sk
        loss_disc_sk.backward(retain_graph=True)

        loss_disc_im = self.criterion_gan(self.disc_im(self.im_fe), True) + \
            self.criterion_gan(self.disc_im(self.se2im_em), False)
        loss_disc_im = self.lambda_disc_im * loss_disc_im
        loss_disc_im.backward()

        self.optimizer_disc.step()

        loss_disc = loss_disc_se + loss_disc_sk + loss_disc_im
        return {"aut_enc": loss_aut_enc, "gen": loss_gen, "disc": loss_disc}

    def optimize_params(self, sk, im, cl, sem):
        se = sem[cl]
        self.forward(sk, im, se)
        return self.backward(se, cl)


def train(train_batches, model, epoch):
    model.train()
    for i, (sk, im, cl) in enumerate(train_batches):
        loss = model.optimize_params(sk, im, cl, train_batches.sem)
        print(f"[Train] Epoch: [{epoch}][{i}] Gen {loss['gen'].item():.4f} Disc {loss['disc'].item():.4f} "
              f"AE {loss['aut_enc'].item():.4f}")


class Batches(list):
    sem = None


def main():
    torch.manual_seed(0)
    params_model = {"dim_out": 16, "sem_dim": 20, "num_clss": 5, "lr": 1e-4,
                    "lambda_se": 10.0, "lambda_im": 10.0, "lambda_sk": 10.0, "lambda_gen_cyc": 1.0,
                    "lambda_gen_adv": 1.0, "lambda_gen_cls": 1.0, "lambda_gen_reg": 0.1,
                    "lambda_disc_se": 0.25, "lambda_disc_sk": 0.5, "lambda_disc_im": 0.5, "lambda_regular": 0.001}
    model = SEM_PCYC(params_model)
    batches = Batches((torch.randn(8, 40), torch.randn(8, 40), torch.randint(0, 5, (8,))) for _ in range(3))
    batches.sem = torch.randn(5, 20)
    for epoch in range(2):
        train(batches, model, epoch)


if __name__ == "__main__":
    main()
