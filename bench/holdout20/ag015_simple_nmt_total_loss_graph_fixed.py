# source: https://github.com/kh-kim/simple-nmt/commit/e868ff7afc08f2a2bd0777b055bcfa037ea760e0
# symptom: total_loss keeps the graph of every batch: True
"""simple-nmt: `Trainer.train_epoch` for a small LSTM sequence-to-sequence model.

Fixed as in the commit: the statistics are summed detached, `total_loss += loss.detach()` (and the parameter
and gradient norms with `.detach()`).
"""
import torch
import torch.nn as nn
import torch.nn.utils as torch_utils

torch.manual_seed(0)
VERBOSE_BATCH_WISE = 2
PAD, BOS, EOS, VOCAB = 0, 1, 2, 40


class MiniBatch:
    def __init__(self, src, tgt):
        self.src = src
        self.tgt = (tgt, torch.full((tgt.size(0),), tgt.size(1) - 1))


class Seq2Seq(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.emb_src = nn.Embedding(VOCAB, hidden)
        self.emb_dec = nn.Embedding(VOCAB, hidden)
        self.encoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.decoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.generator = nn.Sequential(nn.Linear(hidden, VOCAB), nn.LogSoftmax(dim=-1))

    def forward(self, src, tgt):
        _, h = self.encoder(self.emb_src(src))
        out, _ = self.decoder(self.emb_dec(tgt), h)
        return self.generator(out)


def get_parameter_norm(parameters, norm_type=2):
    total_norm = 0
    for p in parameters:
        total_norm += (p.data ** norm_type).sum()
    return total_norm ** (1. / norm_type)


def get_grad_norm(parameters, norm_type=2):
    parameters = list(filter(lambda p: p.grad is not None, parameters))
    total_norm = 0
    for p in parameters:
        total_norm += (p.grad.data ** norm_type).sum()
    return total_norm ** (1. / norm_type)


class Config:
    max_grad_norm = 5.
    n_epochs = 2


class Trainer:
    def __init__(self, model, crit, config):
        self.model = model
        self.crit = crit
        self.config = config

    def _get_loss(self, y_hat, y):
        return self.crit(y_hat.contiguous().view(-1, y_hat.size(-1)), y.contiguous().view(-1))

    def train_epoch(self, train, optimizer, verbose=VERBOSE_BATCH_WISE):
        total_loss, total_word_count = 0, 0
        total_param_norm, total_grad_norm = 0, 0
        avg_loss, avg_param_norm, avg_grad_norm = 0, 0, 0

        for idx, mini_batch in enumerate(train):
            x, y = mini_batch.src, mini_batch.tgt[0][:, 1:]
            optimizer.zero_grad()

            y_hat = self.model(x, mini_batch.tgt[0][:, :-1])
            loss = self._get_loss(y_hat, y)
            loss.div(y.size(0)).backward()

            # Simple math to show stats.
            total_loss += loss.detach()
            total_word_count += int(mini_batch.tgt[1].sum())
            total_param_norm += get_parameter_norm(self.model.parameters()).detach()
            total_grad_norm += get_grad_norm(self.model.parameters()).detach()

            avg_loss = total_loss / total_word_count
            avg_param_norm = total_param_norm / (idx + 1)
            avg_grad_norm = total_grad_norm / (idx + 1)

            if verbose is VERBOSE_BATCH_WISE and idx % 4 == 0:
                print('|param|=%.2f |g_param|=%.2f loss=%.4e PPL=%.2f' % (
                    avg_param_norm, avg_grad_norm, avg_loss, avg_loss.exp()))

            torch_utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
            optimizer.step()

        print("total_loss keeps the graph of every batch:", bool(torch.is_tensor(total_loss) and total_loss.requires_grad))
        return avg_loss, avg_param_norm, avg_grad_norm

    def train(self, train_data, optimizer):
        for epoch in range(self.config.n_epochs):
            avg_loss, param_norm, grad_norm = self.train_epoch(train_data, optimizer)
            print('epoch %d: loss=%.4e |param|=%.2f |g_param|=%.2f' % (epoch + 1, float(avg_loss), param_norm, grad_norm))


def make_batches(n=12, batch_size=8, length=6):
    batches = []
    for _ in range(n):
        src = torch.randint(3, VOCAB, (batch_size, length))
        body = src.flip(1)
        tgt = torch.cat([torch.full((batch_size, 1), BOS), body, torch.full((batch_size, 1), EOS)], dim=1)
        batches.append(MiniBatch(src, tgt))
    return batches


model = Seq2Seq()
crit = nn.NLLLoss(ignore_index=PAD, reduction='sum')
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
Trainer(model, crit, Config()).train(make_batches(), optimizer)
