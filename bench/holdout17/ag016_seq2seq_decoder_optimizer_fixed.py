# source: written for bench/holdout17 from RULES.md AG016 (seq2seq with separate encoder/decoder optimizers: only the encoder's is zeroed each iteration)
# symptom: decoder gradients accumulated: True
"""Reverse-the-sequence seq2seq with teacher forcing, encoder and decoder on separate optimizers."""
import random
import torch
import torch.nn as nn

VOCAB, HID, SOS = 12, 32, 0


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HID)
        self.gru = nn.GRU(HID, HID, batch_first=True)

    def forward(self, src):
        return self.gru(self.emb(src))[1]


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HID)
        self.gru = nn.GRU(HID, HID, batch_first=True)
        self.out = nn.Linear(HID, VOCAB)

    def forward(self, tok, h):
        o, h = self.gru(self.emb(tok), h)
        return self.out(o.squeeze(1)), h


random.seed(0)
torch.manual_seed(0)
encoder, decoder = Encoder(), Decoder()
encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.05)
decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss()
carried = False
for it in range(6):
    src = torch.randint(1, VOCAB, (4, 6))
    tgt = src.flip(1)
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    h = encoder(src)
    tok = torch.full((4, 1), SOS)
    loss = 0.0
    for t in range(tgt.size(1)):
        logits, h = decoder(tok, h)
        loss = loss + criterion(logits, tgt[:, t])
        tok = tgt[:, t:t + 1] if random.random() < 0.5 else logits.argmax(-1, keepdim=True)
    carried |= decoder.out.weight.grad is not None and bool(decoder.out.weight.grad.any())
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    print("iter", it, round(loss.item() / tgt.size(1), 4))
print("decoder gradients accumulated:", carried)
