# source: https://github.com/OpenNMT/OpenNMT-py/commit/347429bee32dad569a8796d219dd75c108e79528
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""OpenNMT-py (2017): an attentional LSTM encoder-decoder whose word embeddings start from pretrained vectors
(`-pre_word_vecs_enc` / `-pre_word_vecs_dec`, files written by a preprocessing step).

`Encoder.__init__` and `Decoder.__init__` load the vectors with `self.word_lut.weight.copy_(pretrained)`: an
in-place copy into the embedding's weight Parameter, a leaf that requires grad, outside `no_grad`. Building the
model raises.
"""
import os
import tempfile
from types import SimpleNamespace

import torch
import torch.nn as nn

torch.manual_seed(0)
PAD = 0


class Encoder(nn.Module):
    def __init__(self, opt, vocab_size):
        super().__init__()
        self.layers = opt.layers
        self.hidden_size = opt.rnn_size
        self.word_lut = nn.Embedding(vocab_size, opt.word_vec_size, padding_idx=PAD)
        self.rnn = nn.LSTM(opt.word_vec_size, self.hidden_size, num_layers=opt.layers, batch_first=True)

        if opt.pre_word_vecs_enc is not None:
            pretrained = torch.load(opt.pre_word_vecs_enc)
            self.word_lut.weight.copy_(pretrained)  # expect: AG001

    def forward(self, input, hidden=None):
        emb = self.word_lut(input)
        outputs, hidden_t = self.rnn(emb, hidden)
        return hidden_t, outputs


class Decoder(nn.Module):
    def __init__(self, opt, vocab_size):
        super().__init__()
        self.layers = opt.layers
        self.hidden_size = opt.rnn_size
        self.word_lut = nn.Embedding(vocab_size, opt.word_vec_size, padding_idx=PAD)
        self.rnn = nn.LSTM(opt.word_vec_size, self.hidden_size, num_layers=opt.layers, batch_first=True)
        self.attn = nn.Linear(self.hidden_size * 2, self.hidden_size)

        if opt.pre_word_vecs_dec is not None:
            pretrained = torch.load(opt.pre_word_vecs_dec)
            self.word_lut.weight.copy_(pretrained)  # expect: AG001

    def forward(self, input, hidden, context):
        emb = self.word_lut(input)
        output, hidden = self.rnn(emb, hidden)
        scores = torch.bmm(output, context.transpose(1, 2)).softmax(dim=-1)
        attn_ctx = torch.bmm(scores, context)
        return torch.tanh(self.attn(torch.cat([output, attn_ctx], dim=-1))), hidden


class NMTModel(nn.Module):
    def __init__(self, encoder, decoder, generator):
        super().__init__()
        self.encoder, self.decoder, self.generator = encoder, decoder, generator

    def forward(self, src, tgt):
        enc_hidden, context = self.encoder(src)
        out, _ = self.decoder(tgt[:, :-1], enc_hidden, context)
        return self.generator(out)


workdir = tempfile.mkdtemp()
src_vocab, tgt_vocab, dim = 50, 60, 16
torch.save(torch.randn(src_vocab, dim), os.path.join(workdir, "emb_enc.pt"))
torch.save(torch.randn(tgt_vocab, dim), os.path.join(workdir, "emb_dec.pt"))
opt = SimpleNamespace(layers=1, rnn_size=32, word_vec_size=dim, param_init=0.1,
                      pre_word_vecs_enc=os.path.join(workdir, "emb_enc.pt"),
                      pre_word_vecs_dec=os.path.join(workdir, "emb_dec.pt"))

encoder = Encoder(opt, src_vocab)
decoder = Decoder(opt, tgt_vocab)
generator = nn.Sequential(nn.Linear(opt.rnn_size, tgt_vocab), nn.LogSoftmax(dim=-1))
model = NMTModel(encoder, decoder, generator)
criterion = nn.NLLLoss(ignore_index=PAD, reduction='sum')
optim = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(2):
    src = torch.randint(1, src_vocab, (8, 7))
    tgt = torch.randint(1, tgt_vocab, (8, 6))
    model.zero_grad()
    out = model(src, tgt)
    loss = criterion(out.reshape(-1, tgt_vocab), tgt[:, 1:].reshape(-1))
    loss.div(src.size(0)).backward()
    optim.step()
    print(f"epoch {epoch} loss {loss.item() / tgt[:, 1:].numel():.4f}")
