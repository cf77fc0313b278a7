# source: https://github.com/facebookresearch/fairseq/issues/760
# symptom: modified by an inplace operation
"""fairseq `AdaptiveSoftmax.get_log_prob`: each tail cluster's log-probabilities are computed as
`self.lsm(tail_out).add_(tail_priors[idxs, i, None])`, an in-place add on the output of `LogSoftmax`, which autograd
saved for its backward. Fine under `torch.no_grad()` scoring, but the reporter used `log_output` for training and
`backward()` fails on the modified log-softmax output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AdaptiveSoftmax(nn.Module):
    def __init__(self, vocab_size, input_dim, cutoff, dropout=0.0):
        super().__init__()
        if vocab_size > cutoff[-1]:
            cutoff = cutoff + [vocab_size]
        output_dim = cutoff[0] + len(cutoff) - 1
        self.vocab_size = vocab_size
        self.cutoff = cutoff
        self.lsm = nn.LogSoftmax(dim=1)
        self.head = nn.Linear(input_dim, output_dim, bias=False)
        self.tail = nn.ModuleList()
        for i in range(len(cutoff) - 1):
            self.tail.append(nn.Sequential(
                nn.Linear(input_dim, input_dim // 4 ** (i + 1), bias=False),
                nn.Dropout(dropout),
                nn.Linear(input_dim // 4 ** (i + 1), cutoff[i + 1] - cutoff[i], bias=False),
            ))

    def adapt_target(self, target):
        target = target.view(-1)
        new_target = [target.clone()]
        target_idxs = []
        for i in range(len(self.cutoff) - 1):
            mask = target.ge(self.cutoff[i]).mul(target.lt(self.cutoff[i + 1]))
            new_target[0][mask] = self.cutoff[0] + i
            if mask.any():
                target_idxs.append(mask.nonzero(as_tuple=False).squeeze(1))
                new_target.append(target[mask].add(-self.cutoff[i]))
            else:
                target_idxs.append(None)
                new_target.append(None)
        return new_target, target_idxs

    def get_log_prob(self, input, target):
        bsz, length, dim = input.size()
        input = input.contiguous().view(-1, dim)
        if target is not None:
            _, target_idxs = self.adapt_target(target)
        else:
            target_idxs = None
        head_y = self.head(input)
        log_probs = head_y.new_zeros(input.size(0), self.vocab_size)
        head_sz = self.cutoff[0] + len(self.tail)
        log_probs[:, :head_sz] = self.lsm(head_y)
        tail_priors = log_probs[:, self.cutoff[0] - 1: head_sz - 1].clone()
        for i in range(len(self.tail)):
            start = self.cutoff[i]
            end = self.cutoff[i + 1]
            if target_idxs is None:
                tail_out = log_probs[:, start:end]
                tail_out.copy_(self.tail[i](input))
                log_probs[:, start:end] = self.lsm(tail_out).add_(tail_priors[:, i, None])  # expect: AG006
            elif target_idxs[i] is not None:
                idxs = target_idxs[i]
                tail_out = log_probs[idxs, start:end]
                tail_out.copy_(self.tail[i](input[idxs]))
                log_probs[idxs, start:end] = self.lsm(tail_out).add_(tail_priors[idxs, i, None])  # expect: AG006
        return log_probs.view(bsz, length, -1)


class TinyLM(nn.Module):
    def __init__(self, vocab_size=40, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.adaptive_softmax = AdaptiveSoftmax(vocab_size, dim, cutoff=[10, 20])

    def forward(self, tokens):
        x, _ = self.rnn(self.embed(tokens))
        return x


torch.manual_seed(0)
model = TinyLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    tokens = torch.randint(0, 40, (4, 6))
    target = torch.randint(0, 40, (4, 6))
    hidden = model(tokens)
    log_output = model.adaptive_softmax.get_log_prob(hidden, target)
    loss = F.nll_loss(log_output.view(-1, 40), target.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "loss {:.4f}".format(loss.item()))
