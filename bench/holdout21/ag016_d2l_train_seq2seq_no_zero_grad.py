# source: https://github.com/d2l-ai/d2l-en/commit/0a92258fe036d82f2e66305139ab261d5bdc03cc
# symptom: gradients carried over from the previous step: True
"""d2l-ai/d2l-en d2l/torch.py before #1689: `train_seq2seq` runs the teacher-forced
encoder-decoder, `l.sum().backward()`, `grad_clipping(net, 1)` and `optimizer.step()` for
every batch, and never zeroes the gradients."""
import torch
from torch import nn


class Seq2SeqEncoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, num_layers)

    def forward(self, X, *args):
        X = self.embedding(X).permute(1, 0, 2)
        output, state = self.rnn(X)
        return output, state


class Seq2SeqDecoder(nn.Module):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, *args):
        return enc_outputs[1]

    def forward(self, X, state):
        X = self.embedding(X).permute(1, 0, 2)
        context = state[-1].repeat(X.shape[0], 1, 1)
        output, state = self.rnn(torch.cat((X, context), 2), state)
        return self.dense(output).permute(1, 0, 2), state


class EncoderDecoder(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, enc_X, dec_X, *args):
        enc_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_outputs, *args)
        return self.decoder(dec_X, dec_state)


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, dtype=torch.float32)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    def forward(self, pred, label, valid_len):
        weights = torch.ones_like(label)
        weights = sequence_mask(weights, valid_len)
        self.reduction = 'none'
        unweighted_loss = super().forward(pred.permute(0, 2, 1), label)
        return (unweighted_loss * weights).mean(dim=1)


def grad_clipping(net, theta):
    params = [p for p in net.parameters() if p.requires_grad]
    norm = torch.sqrt(sum(torch.sum(p.grad ** 2) for p in params))
    if norm > theta:
        for param in params:
            param.grad[:] *= theta / norm


def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    def xavier_init_weights(m):
        if type(m) == nn.Linear:
            nn.init.xavier_uniform_(m.weight)
        if type(m) == nn.GRU:
            for param in m._flat_weights_names:
                if "weight" in param:
                    nn.init.xavier_uniform_(m._parameters[param])

    net.apply(xavier_init_weights)
    net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    loss = MaskedSoftmaxCELoss()
    net.train()
    carried = False
    for epoch in range(num_epochs):
        for batch in data_iter:
            before = net.decoder.dense.bias.grad
            before = None if before is None else before.clone()
            X, X_valid_len, Y, Y_valid_len = [x.to(device) for x in batch]
            bos = torch.tensor([tgt_vocab['<bos>']] * Y.shape[0], device=device).reshape(-1, 1)
            dec_input = torch.cat([bos, Y[:, :-1]], 1)  # teacher forcing
            Y_hat, _ = net(X, dec_input, X_valid_len)
            l = loss(Y_hat, Y, Y_valid_len)
            if before is not None and before.abs().sum() > 0:
                fresh = torch.autograd.grad(l.sum(), net.decoder.dense.bias, retain_graph=True)[0]
            l.sum().backward()
            if before is not None and before.abs().sum() > 0:
                carried = carried or not torch.allclose(net.decoder.dense.bias.grad, fresh)
            grad_clipping(net, 1)
            optimizer.step()  # expect: AG016
    print('gradients carried over from the previous step:', carried)


def main():
    torch.manual_seed(0)
    vocab = 12
    tgt_vocab = {'<bos>': 1}
    batches = []
    for _ in range(4):
        X = torch.randint(3, vocab, (4, 6))
        Y = torch.randint(3, vocab, (4, 6))
        batches.append((X, torch.full((4,), 6), Y, torch.tensor([6, 5, 4, 6])))
    encoder = Seq2SeqEncoder(vocab, 8, 16, 2)
    decoder = Seq2SeqDecoder(vocab, 8, 16, 2)
    net = EncoderDecoder(encoder, decoder)
    train_seq2seq(net, batches, 0.005, 2, tgt_vocab, torch.device('cpu'))


if __name__ == '__main__':
    main()
