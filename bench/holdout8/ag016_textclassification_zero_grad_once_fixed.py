# source: https://github.com/FreedomIntelligence/TextClassificationBenchmark/issues/20
# symptom: gradients accumulated across steps: True
"""TextClassificationBenchmark main.py: `optimizer.zero_grad()` is called once, before the loop over
the training batches; inside the loop every batch does loss.backward(), clip_gradient() and
optimizer.step(), so each step applies the sum of the gradients of all batches so far.

Written for bench/holdout8 with the structure of the repository's main.py (a module-level script:
opts, models.setup(opt) building an LSTM classifier, NLLLoss on log-softmax outputs, utils.clip_gradient,
utils.evaluation); torchtext iterators are replaced by random token batches.

Twin: the issue has no answer; the twin zeroes the gradients in each training step, as the issue asks.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.modules.loss import NLLLoss


class Opt:
    model = "lstm"
    vocab_size = 100
    embedding_dim = 16
    hidden_dim = 16
    label_size = 3
    batch_size = 8
    learning_rate = 2e-3
    grad_clip = 1e-1
    max_seq_len = 20


class LSTMClassifier(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.hidden_dim = opt.hidden_dim
        self.batch_size = opt.batch_size
        self.word_embeddings = nn.Embedding(opt.vocab_size, opt.embedding_dim)
        self.lstm = nn.LSTM(opt.embedding_dim, opt.hidden_dim)
        self.hidden2label = nn.Linear(opt.hidden_dim, opt.label_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        x = embeds.permute(1, 0, 2)
        lstm_out, _ = self.lstm(x)
        y = self.hidden2label(lstm_out[-1])
        return F.log_softmax(y, dim=1)


def setup(opt):
    if opt.model == "lstm":
        return LSTMClassifier(opt)
    raise Exception("model not supported: {}".format(opt.model))


def clip_gradient(optimizer, grad_clip):
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None and param.requires_grad:
                param.grad.data.clamp_(-grad_clip, grad_clip)


def evaluation(model, data_iter):
    model.eval()
    accuracy = []
    with torch.no_grad():
        for text, label in data_iter:
            predicted = model(text)
            accuracy.append((predicted.argmax(1) == label).float().mean().item())
    return sum(accuracy) / len(accuracy)


class Batch:
    def __init__(self, opt):
        self.text = (torch.randint(0, opt.vocab_size, (opt.batch_size, opt.max_seq_len)),)
        self.label = torch.randint(0, opt.label_size, (opt.batch_size,))


torch.manual_seed(0)
opt = Opt()
train_iter = [Batch(opt) for _ in range(6)]
test_iter = [(b.text[0], b.label) for b in (Batch(opt) for _ in range(2))]

model = setup(opt)
model.train()
optimizer = optim.Adam(model.parameters(), lr=opt.learning_rate)
optimizer.zero_grad()
loss_fun = NLLLoss()

accumulated = False
for index, batch in enumerate(train_iter):
    if len(batch.text[0]) == opt.batch_size:
        optimizer.zero_grad()
        predicted = model(batch.text[0])
        loss = loss_fun(predicted, batch.label)
        grad = model.hidden2label.weight.grad
        accumulated = accumulated or (grad is not None and bool(grad.abs().sum() > 0))
        loss.backward()
        clip_gradient(optimizer, opt.grad_clip)
        optimizer.step()
        print("loss : %.5f" % loss.item())

print("accuracy:", evaluation(model, test_iter))
print("gradients accumulated across steps:", accumulated)
