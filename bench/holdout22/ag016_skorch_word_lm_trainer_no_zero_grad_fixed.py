# source: https://github.com/skorch-dev/skorch/commit/7d3688796c140802b79b593b4f6f90d3d75cccf8
# symptom: gradients carried over from the previous step: True
"""skorch (then "inferno") examples/word_language_model/train.py after the fix:
`self.module_.zero_grad()` right after repackaging the hidden state. Before the fix
`Trainer.train_step` repackages the hidden state, runs the LSTM language model,
calls `loss.backward()`, clips, and updates the parameters by hand
(`p.data.add_(-lr, p.grad.data)`) without ever zeroing the module's gradients, so each
batch's update also carries every earlier batch's gradient.

The repository's update is a manual SGD step (no optimizer object); the AG016 marker is
on that update. Stand-ins: a minimal `NeuralNet` base with the fit loop the library ran
(`on_train_begin`, batches from `iterator_train`, `train_step`), a random token corpus,
the Penn loader's `batchify`/`get_batch` logic, `Variable` dropped, `add_(-lr, g)` spelt
`add_(g, alpha=-lr)` for torch 2.x.
"""
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super(RNNModel, self).__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        self.encoder.weight.data.uniform_(-initrange, initrange)
        self.decoder.bias.data.fill_(0)
        self.decoder.weight.data.uniform_(-initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output.view(output.size(0) * output.size(1), output.size(2)))
        return decoded.view(output.size(0), output.size(1), decoded.size(1)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


class Loader:
    def __init__(self, source, bptt=10, batch_size=20):
        self.batches = self.batchify(source, batch_size)
        self.bptt = bptt

    def batchify(self, data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        return data.view(bsz, -1).t().contiguous()

    def get_batch(self, i):
        seq_len = min(self.bptt, len(self.batches) - 1 - i)
        data = self.batches[i:i + seq_len]
        target = self.batches[i + 1:i + 1 + seq_len].view(-1)
        return data, target

    def __iter__(self):
        for i in range(0, self.batches.size(0) - 1, self.bptt):
            yield self.get_batch(i)


class NeuralNet:
    """The part of the library's NeuralNet that the example relies on."""

    def __init__(self, module, iterator_train, criterion, lr, batch_size, max_epochs=2, **kwargs):
        self.module = module
        self.iterator_train = iterator_train
        self.criterion_ = criterion()
        self.lr = lr
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.module_kwargs = {k[len('module__'):]: v for k, v in kwargs.items() if k.startswith('module__')}

    def get_loss(self, y_pred, y_true):
        return self.criterion_(y_pred, y_true)

    def fit(self, X):
        self.module_ = self.module(**self.module_kwargs)
        self.on_train_begin(self)
        for epoch in range(self.max_epochs):
            for xi, yi in self.iterator_train(X, batch_size=self.batch_size):
                loss = self.train_step(xi, yi, None)
            print("epoch %d train loss %.4f" % (epoch, loss.item()))
        return self


class Trainer(NeuralNet):

    def __init__(self, criterion=torch.nn.CrossEntropyLoss, clip=0.25, lr=20, *args, **kwargs):
        self.clip = clip
        self.grads_carried = False
        super(Trainer, self).__init__(criterion=criterion, lr=lr, *args, **kwargs)

    def repackage_hidden(self, h):
        """Detach hidden states from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(self.repackage_hidden(v) for v in h)

    def on_train_begin(self, net, *args, **kwargs):
        self.hidden = self.module_.init_hidden(self.batch_size)

    def train_step(self, X, y, _):
        self.module_.train()

        self.hidden = self.repackage_hidden(self.hidden)
        self.module_.zero_grad()

        output, self.hidden = self.module_(X, self.hidden)
        y_pred = output.view(-1, ntokens)

        loss = self.get_loss(y_pred, y)
        g = self.module_.decoder.weight.grad
        self.grads_carried = self.grads_carried or (g is not None and bool(g.abs().sum() > 0))
        loss.backward()

        torch.nn.utils.clip_grad_norm_(self.module_.parameters(), self.clip)
        for p in self.module_.parameters():
            p.data.add_(p.grad.data, alpha=-self.lr)

        return loss


torch.manual_seed(0)
ntokens = 30
corpus_train = torch.randint(0, ntokens, (600,))

trainer = Trainer(
    module=RNNModel,
    iterator_train=Loader,
    batch_size=4,
    lr=1.0,
    module__rnn_type='LSTM',
    module__ntoken=ntokens,
    module__ninp=16,
    module__nhid=16,
    module__nlayers=2,
)
trainer.fit(corpus_train)
print("gradients carried over from the previous step:", trainer.grads_carried)
