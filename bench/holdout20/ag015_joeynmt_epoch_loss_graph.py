# source: https://github.com/joeynmt/joeynmt/commit/6fc9f4a984497b66cd1222f1fff315a3a7c82d8b
# symptom: epoch_loss keeps the graph of every batch: True
"""joeynmt: `TrainManager.train_and_validate` for a small GRU encoder-decoder with gradient accumulation
(`batch_multiplier`).

`_train_batch` returns `norm_batch_loss`, the normalised loss tensor that `backward()` went through, and the
epoch loop sums it with `epoch_loss += batch_loss`: the running sum keeps every batch's graph alive until the
end of the epoch (GPU memory grows with the epoch).
"""
import logging
import time

import torch
import torch.nn as nn

torch.manual_seed(42)
logging.basicConfig(level=logging.INFO, format="%(message)s")

PAD, BOS, VOCAB = 0, 1, 30


class Batch:
    def __init__(self, src, trg, pad_index):
        self.src = src
        self.trg_input = trg[:, :-1]
        self.trg = trg[:, 1:]
        self.nseqs = src.size(0)
        self.ntokens = (self.trg != pad_index).sum().item()


class Model(nn.Module):
    def __init__(self, emb=16, hidden=32):
        super().__init__()
        self.src_embed = nn.Embedding(VOCAB, emb, padding_idx=PAD)
        self.trg_embed = nn.Embedding(VOCAB, emb, padding_idx=PAD)
        self.encoder = nn.GRU(emb, hidden, batch_first=True)
        self.decoder = nn.GRU(emb, hidden, batch_first=True)
        self.output_layer = nn.Linear(hidden, VOCAB)

    def forward(self, src, trg_input):
        _, hidden = self.encoder(self.src_embed(src))
        out, _ = self.decoder(self.trg_embed(trg_input), hidden)
        return self.output_layer(out)

    def get_loss_for_batch(self, batch, loss_function):
        log_probs = torch.log_softmax(self(batch.src, batch.trg_input), dim=-1)
        return loss_function(log_probs.reshape(-1, VOCAB), batch.trg.reshape(-1))


def make_data_iter(n_batches, batch_size):
    for _ in range(n_batches):
        src = torch.randint(2, VOCAB, (batch_size, 7))
        trg = torch.cat([torch.full((batch_size, 1), BOS), src.flip(1)], dim=1)
        yield src, trg


class TrainManager:
    def __init__(self, model, batch_multiplier=2, epochs=2, logging_freq=4):
        self.model = model
        self.loss = nn.NLLLoss(ignore_index=PAD, reduction="sum")
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.batch_multiplier = batch_multiplier
        self.normalization = "batch"
        self.clip_grad_fun = lambda params: nn.utils.clip_grad_norm_(params, max_norm=1.0)
        self.epochs = epochs
        self.logging_freq = logging_freq
        self.pad_index = PAD
        self.steps = 0
        self.total_tokens = 0
        self.logger = logging.getLogger(__name__)

    def train_and_validate(self):
        for epoch_no in range(self.epochs):
            self.logger.info("EPOCH %d", epoch_no + 1)
            self.model.train()
            start = time.time()
            processed_tokens = self.total_tokens
            count = 0
            epoch_loss = 0

            for src, trg in make_data_iter(n_batches=16, batch_size=8):
                self.model.train()
                batch = Batch(src, trg, self.pad_index)

                # only update every batch_multiplier batches
                update = count == 0
                batch_loss = self._train_batch(batch, update=update)
                count = self.batch_multiplier if update else count
                count -= 1
                epoch_loss += batch_loss  # expect: AG015

                if self.steps % self.logging_freq == 0 and update:
                    elapsed = time.time() - start
                    elapsed_tokens = self.total_tokens - processed_tokens
                    self.logger.info("Epoch %d Step: %d Batch Loss: %f Tokens per Sec: %f",
                                     epoch_no + 1, self.steps, batch_loss, elapsed_tokens / max(elapsed, 1e-6))
                    start = time.time()

            self.logger.info("Epoch %d: total training loss %.2f", epoch_no + 1, epoch_loss)
            print("epoch_loss keeps the graph of every batch:", torch.is_tensor(epoch_loss)
                  and epoch_loss.grad_fn is not None)

    def _train_batch(self, batch, update=True):
        batch_loss = self.model.get_loss_for_batch(batch=batch, loss_function=self.loss)

        if self.normalization == "batch":
            normalizer = batch.nseqs
        elif self.normalization == "tokens":
            normalizer = batch.ntokens
        else:
            raise NotImplementedError("Only normalize by 'batch' or 'tokens'")

        norm_batch_loss = batch_loss / normalizer
        # division needed since loss.backward sums the gradients until updated
        norm_batch_multiply = norm_batch_loss / self.batch_multiplier

        norm_batch_multiply.backward()

        if self.clip_grad_fun is not None:
            self.clip_grad_fun(params=self.model.parameters())

        if update:
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.steps += 1

        self.total_tokens += batch.ntokens
        return norm_batch_loss


TrainManager(Model()).train_and_validate()
