"""simple-nmt MLE trainer: with `iteration_per_update == 1` the optimizer's gradients are never zeroed.

`MaximumLikelihoodEstimationEngine.train` supports gradient accumulation: it zeroes the gradients when
`iteration % iteration_per_update == 1` and steps when `iteration % iteration_per_update == 0`. With the default
`iteration_per_update = 1` the first test is `iteration % 1 == 1`, never true, so `zero_grad()` never runs while
`step()` runs every iteration: every update applies the sum of all the gradients seen so far.
"""
# source: https://github.com/kh-kim/simple-nmt/pull/22
# symptom: gradients carried over from the previous step: True
from types import SimpleNamespace

import math
from statistics import mean

import torch
import torch.nn.utils as torch_utils
from torch import nn, optim


class Engine:
    """The part of ignite's Engine the trainer uses: state.iteration counts from 1 across epochs."""

    def __init__(self, process_function):
        self._process_function = process_function
        self.state = SimpleNamespace(iteration=0, epoch=0, output=None)

    def run(self, data, max_epochs=1):
        for epoch in range(1, max_epochs + 1):
            self.state.epoch = epoch
            outputs = []
            for batch in data:
                self.state.iteration += 1
                self.state.output = self._process_function(self, batch)
                outputs.append(self.state.output)
            print(f"epoch {epoch} loss {mean(o['loss'] for o in outputs):.4f} "
                  f"|g_param| {mean(o['|g_param|'] for o in outputs):.3f}")


class Seq2Seq(nn.Module):
    def __init__(self, vocab_size, hidden_size=32):
        super().__init__()
        self.emb_src = nn.Embedding(vocab_size, hidden_size)
        self.emb_dec = nn.Embedding(vocab_size, hidden_size)
        self.encoder = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.decoder = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.generator = nn.Sequential(nn.Linear(hidden_size, vocab_size), nn.LogSoftmax(dim=-1))

    def forward(self, src, tgt_in):
        _, h = self.encoder(self.emb_src(src[0]))
        out, _ = self.decoder(self.emb_dec(tgt_in), h)
        return self.generator(out)


def get_grad_norm(parameters):
    return sum(p.grad.pow(2).sum().item() for p in parameters if p.grad is not None) ** 0.5


class MaximumLikelihoodEstimationEngine(Engine):
    def __init__(self, func, model, crit, optimizer, config):
        self.model = model
        self.crit = crit
        self.optimizer = optimizer
        self.config = config
        self.carried_over = False
        super().__init__(func)

    @staticmethod
    def train(engine, mini_batch):
        engine.model.train()
        if engine.state.iteration % engine.config.iteration_per_update == 1:
            engine.optimizer.zero_grad()

        x, y = mini_batch.src, mini_batch.tgt[0][:, 1:]
        y_hat = engine.model(x, mini_batch.tgt[0][:, :-1])
        loss = engine.crit(y_hat.contiguous().view(-1, y_hat.size(-1)), y.contiguous().view(-1))
        backward_target = loss.div(y.size(0)).div(engine.config.iteration_per_update)

        if (engine.state.iteration - 1) % engine.config.iteration_per_update == 0:  # first batch of an update
            if any(p.grad is not None and p.grad.abs().sum() > 0 for p in engine.model.parameters()):
                engine.carried_over = True
        backward_target.backward()

        word_count = int(mini_batch.tgt[1].sum())
        g_norm = float(get_grad_norm(engine.model.parameters()))

        if engine.state.iteration % engine.config.iteration_per_update == 0:
            torch_utils.clip_grad_norm_(engine.model.parameters(), engine.config.max_grad_norm)
            engine.optimizer.step()  # expect: AG016

        loss = float(loss / word_count)
        return {"loss": loss, "ppl": math.exp(loss), "|g_param|": g_norm}


def make_batches(vocab_size, n_batches=8, batch_size=16, length=7):
    batches = []
    for _ in range(n_batches):
        src = torch.randint(3, vocab_size, (batch_size, length))
        tgt = torch.cat([torch.full((batch_size, 1), 1), src.flip(1), torch.full((batch_size, 1), 2)], dim=1)
        lengths = torch.full((batch_size,), length + 2)
        batches.append(SimpleNamespace(src=(src, lengths - 2), tgt=(tgt, lengths)))
    return batches


def main():
    torch.manual_seed(0)
    vocab_size = 20
    config = SimpleNamespace(iteration_per_update=1, max_grad_norm=5.0, n_epochs=3)
    model = Seq2Seq(vocab_size)
    crit = nn.NLLLoss(reduction="sum")
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    trainer = MaximumLikelihoodEstimationEngine(MaximumLikelihoodEstimationEngine.train, model, crit, optimizer, config)
    trainer.run(make_batches(vocab_size), max_epochs=config.n_epochs)
    print(f"gradients carried over from the previous step: {trainer.carried_over}")


if __name__ == "__main__":
    main()
