# source: https://github.com/chojw/genb/issues/6
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Twin (the fix the reporter gave in the thread: backpropagate the generator loss first but step `optim_G` only
after the discriminator loss has been backpropagated). GenB (VQA bias model) `train.py`: one generator forward `pred_g = genb(v, q, gen=True)` is scored by the
discriminator (`vae_preds`); `g_loss.backward(retain_graph=True)` and `optim_G.step()` update GenB, then the
discriminator loss built from the same `vae_preds` is backpropagated through GenB's changed weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_ANS = 10


class BaseModel(nn.Module):
    """Stand-in for the UpDn VQA model: image features v [B, K, D], question tokens q [B, T]."""

    def __init__(self, v_dim=16, vocab=30, hid=32):
        super().__init__()
        self.w_emb = nn.Embedding(vocab, hid)
        self.q_rnn = nn.GRU(hid, hid, batch_first=True)
        self.v_proj = nn.Linear(v_dim, hid)
        self.classifier = nn.Sequential(nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, N_ANS))

    def forward(self, v, q):
        _, q_emb = self.q_rnn(self.w_emb(q))
        joint = self.v_proj(v).mean(1) * q_emb[-1]
        return self.classifier(joint)


class GenB(BaseModel):
    """The bias generator: same backbone, plus noise when generating."""

    def forward(self, v, q, gen=True):
        logits = super().forward(v, q)
        if gen:
            logits = logits + 0.1 * torch.randn_like(logits)
        return logits


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_ANS, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, pred):
        return self.net(pred)


def calc_genb_loss(logits, bias, labels):
    gen_grad = torch.clamp(2 * labels * torch.sigmoid(-2 * labels * bias.detach()), 0, 1)
    loss = F.binary_cross_entropy_with_logits(logits, gen_grad)
    loss *= labels.size(1)
    return loss


def train(model, genb, discriminator, train_loader, num_epochs=1):
    optim = torch.optim.Adamax(filter(lambda p: p.requires_grad, model.parameters()), lr=0.001)
    optim_G = torch.optim.Adamax(filter(lambda p: p.requires_grad, genb.parameters()), lr=0.001)
    optim_D = torch.optim.Adamax(filter(lambda p: p.requires_grad, discriminator.parameters()), lr=0.001)
    genb.train(True)
    discriminator.train(True)
    kld = nn.KLDivLoss(reduction='batchmean')
    bce = nn.BCELoss()

    for epoch in range(num_epochs):
        total_loss = 0
        for i, (v, q, a) in enumerate(train_loader):
            v = v.requires_grad_()
            valid = torch.ones(v.size(0), 1)
            fake = torch.zeros(v.size(0), 1)

            # get model output
            optim.zero_grad()
            pred = model(v, q)

            # train genb
            optim_G.zero_grad()
            optim_D.zero_grad()

            pred_g = genb(v, q, gen=True)
            g_loss = F.binary_cross_entropy_with_logits(pred_g, a, reduction='none').mean()
            g_loss *= a.size(1)

            vae_preds = discriminator(pred_g)
            main_preds = discriminator(pred)

            g_distill = kld(F.log_softmax(pred_g, 1), F.softmax(pred.detach(), 1))
            dsc_loss = bce(vae_preds, valid) + bce(main_preds, valid)

            g_loss += dsc_loss + g_distill * 5
            g_loss.backward(retain_graph=True)
            nn.utils.clip_grad_norm_(genb.parameters(), 0.25)

            # train the discriminator
            dsc_loss = bce(vae_preds, fake) + bce(main_preds, valid)
            dsc_loss.backward(retain_graph=True)
            optim_G.step()
            # done training genb
            optim_D.step()
            # done training the discriminator

            # use genb to train the robust model
            genb.train(False)
            pred_g = genb(v, q, gen=False)
            genb_loss = calc_genb_loss(pred, pred_g, a)
            genb_loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optim.step()
            genb.train(True)
            total_loss += genb_loss.item() * q.size(0)
        print(f"epoch {epoch + 1} | train_loss {total_loss:.3f}")


loader = [(torch.randn(4, 6, 16), torch.randint(0, 30, (4, 5)), (torch.rand(4, N_ANS) > 0.7).float()) for _ in range(3)]
train(BaseModel(), GenB(), Discriminator(), loader)
