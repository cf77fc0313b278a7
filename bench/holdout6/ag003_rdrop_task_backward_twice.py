# source: https://github.com/dropreg/R-Drop/issues/8
# symptom: Trying to backward through the graph a second time
"""R-Drop summarisation example on fairseq: `RegLabelSmoothedCrossEntropyCriterion.forward_reg` already runs
the doubled forward, the label-smoothed NLL plus the symmetric KL term, and `optimizer.backward(loss)`; the task's
`RDropTranslationTask.train_step` then scales the returned loss and calls `optimizer.backward(loss)` again."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
PAD = 1


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss = nll_loss.masked_fill(pad_mask, 0.0)
        smooth_loss = smooth_loss.masked_fill(pad_mask, 0.0)
    if reduce:
        nll_loss, smooth_loss = nll_loss.sum(), smooth_loss.sum()
    eps_i = epsilon / lprobs.size(-1)
    return (1.0 - epsilon) * nll_loss + eps_i * smooth_loss, nll_loss


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=30, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.dropout = nn.Dropout(0.3)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src_tokens, src_lengths, prev_output_tokens):
        _, h = self.encoder(self.dropout(self.embed(src_tokens)))
        dec, _ = self.decoder(self.dropout(self.embed(prev_output_tokens)), h)
        return (self.out(self.dropout(dec)),)

    def get_normalized_probs(self, net_output, log_probs):
        logits = net_output[0]
        return F.log_softmax(logits, dim=-1) if log_probs else F.softmax(logits, dim=-1)

    def get_targets(self, sample, net_output):
        return sample["target"]


class FairseqOptimizer:
    def __init__(self, params, lr):
        self.optimizer = torch.optim.Adam(params, lr=lr)

    def backward(self, loss):
        loss.backward()

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step(self):
        self.optimizer.step()


class RegLabelSmoothedCrossEntropyCriterion:
    def __init__(self, label_smoothing=0.1):
        self.eps = label_smoothing
        self.padding_idx = PAD

    def compute_kl_loss(self, model, net_output, pad_mask=None):
        net_prob = model.get_normalized_probs(net_output, log_probs=True)
        net_prob_tec = model.get_normalized_probs(net_output, log_probs=False)
        p, q = torch.split(net_prob, net_prob.size(0) // 2, dim=0)
        p_tec, q_tec = torch.split(net_prob_tec, net_prob_tec.size(0) // 2, dim=0)
        p_loss = F.kl_div(p, q_tec, reduction="none")
        q_loss = F.kl_div(q, p_tec, reduction="none")
        if pad_mask is not None:
            p_loss = p_loss.masked_fill(pad_mask, 0.0)
            q_loss = q_loss.masked_fill(pad_mask, 0.0)
        return (p_loss.sum() + q_loss.sum()) / 2

    def forward_reg(self, model, sample, optimizer, reg_alpha, ignore_grad):
        inp = sample["net_input"]
        concat = {k: torch.cat([v, v.clone()], 0) for k, v in inp.items()}
        net_output = model(**concat)
        lprobs = model.get_normalized_probs(net_output, log_probs=True)
        lprobs = lprobs.view(-1, lprobs.size(-1))
        target = model.get_targets(sample, net_output)
        pad_mask = target.unsqueeze(-1).eq(self.padding_idx)
        target = torch.cat([target, target.clone()], dim=0)
        loss, nll_loss = label_smoothed_nll_loss(lprobs, target.view(-1, 1), self.eps, ignore_index=self.padding_idx)
        loss = loss + reg_alpha * self.compute_kl_loss(model, net_output, pad_mask)
        if ignore_grad:
            loss = loss * 0
        optimizer.backward(loss)  # expect: AG003
        logging_output = {"loss": loss.item(), "nll_loss": nll_loss.item(), "ntokens": sample["ntokens"]}
        return loss, sample["ntokens"], logging_output


class RDropTranslationTask:
    def __init__(self, reg_alpha=5.0):
        self.criterion_reg_alpha = reg_alpha

    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        model.train()
        loss, sample_size, logging_output = criterion.forward_reg(
            model, sample, optimizer, self.criterion_reg_alpha, ignore_grad)
        if ignore_grad:
            loss = loss * 0
        optimizer.backward(loss)  # expect: AG003
        return loss, sample_size, logging_output


def make_sample(bsz=3, src_len=7, tgt_len=5, vocab=30):
    src = torch.randint(2, vocab, (bsz, src_len))
    tgt = torch.randint(2, vocab, (bsz, tgt_len))
    tgt[0, -1] = PAD
    prev = torch.cat([torch.zeros(bsz, 1, dtype=torch.long), tgt[:, :-1]], 1)
    return {"net_input": {"src_tokens": src, "src_lengths": torch.full((bsz,), src_len), "prev_output_tokens": prev},
            "target": tgt, "ntokens": int((tgt != PAD).sum())}


model = TinySeq2Seq()
task, criterion = RDropTranslationTask(), RegLabelSmoothedCrossEntropyCriterion()
optimizer = FairseqOptimizer(model.parameters(), lr=1e-3)
for update_num in range(2):
    optimizer.zero_grad()
    loss, sample_size, log = task.train_step(make_sample(), model, criterion, optimizer, update_num)
    optimizer.step()
    print(update_num, {k: round(v, 3) if isinstance(v, float) else v for k, v in log.items()})
