# source: https://github.com/pytorch/examples/pull/779
# symptom: a leaf Variable that requires grad is being used in an in-place operation
# The word_language_model example's train() updated the RNN parameters by hand with `p.add_(-lr, p.grad)`,
# which raises on a parameter outside no_grad. Re-created: RNNModel, repackage_hidden, get_batch and train() as in the example.
import math

import torch
import torch.nn as nn


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        return decoded.view(-1, decoded.size(-1)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt=8):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


torch.manual_seed(1111)
ntokens = 50
train_data = batchify(torch.randint(0, ntokens, (400,)), 4)
model = RNNModel("LSTM", ntokens, 16, 16, 2)
criterion = nn.NLLLoss()
lr = 20.0
clip = 0.25


def train():
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(4)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, 8)):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(torch.log_softmax(output, dim=-1), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # expect: AG001
        total_loss += loss.item()
    return total_loss


for epoch in range(1, 3):
    print("epoch", epoch, "ppl", math.exp(train() / 12))
