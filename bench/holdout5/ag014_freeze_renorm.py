# source: written for bench/holdout5 (short training program, autoencoder whose decoder is frozen and renormalised after warm-up)
# symptom: modified by an inplace operation
import torch
from torch import nn

torch.manual_seed(26)


def build():
    enc = nn.Sequential(nn.Linear(16, 8), nn.Tanh())
    dec = nn.Linear(8, 16, bias=False)
    return enc, dec


def train(enc, dec, data, steps=12, freeze_at=5):
    opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=1e-2)
    for step in range(steps):
        recon = dec(enc(data))
        loss = ((recon - data) ** 2).mean()
        if step == freeze_at:
            # from here on only the encoder learns; decoder atoms get unit norm
            dec.weight.requires_grad_(False)  # expect: AG014
            dec.weight.div_(dec.weight.norm(dim=0, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.4f}")


encoder, decoder = build()
train(encoder, decoder, torch.randn(50, 16))
