# source: https://github.com/huggingface/transformers/pull/6999
# symptom: tr_loss keeps the graph of every step: True
"""Fixed twin: the merged pull request (after the review asked for `.detach()` rather than a per-step `.item()`, which
halved TPU speed): `training_step()` returns `loss.detach()`, so the running `tr_loss` holds values only.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class TrainingArguments:
    num_train_epochs: int = 2
    gradient_accumulation_steps: int = 2
    max_grad_norm: float = 1.0
    learning_rate: float = 5e-3
    logging_steps: int = 4


class TinyForSequenceClassification(nn.Module):
    def __init__(self, vocab_size=50, hidden=16, num_labels=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        h = (self.embeddings(input_ids) * attention_mask[..., None]).sum(1) / attention_mask.sum(1, keepdim=True)
        logits = self.classifier(h)
        if labels is None:
            return (logits,)
        return (F.cross_entropy(logits, labels), logits)


class Trainer:
    def __init__(self, model, args, train_dataset):
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda step: 1.0)
        self.global_step = 0
        self.epoch = 0
        self.log_history = []

    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        return outputs[0]

    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss.detach()

    def log(self, logs):
        logs["epoch"] = self.epoch
        self.log_history.append(logs)
        print(logs)

    def train(self):
        model = self.model
        tr_loss = torch.tensor(0.0)
        logging_loss_scalar = 0.0
        model.zero_grad()
        for epoch in range(self.args.num_train_epochs):
            epoch_iterator = self.train_dataset
            for step, inputs in enumerate(epoch_iterator):
                tr_loss += self.training_step(model, inputs)

                if (step + 1) % self.args.gradient_accumulation_steps == 0 or (
                        len(epoch_iterator) <= self.args.gradient_accumulation_steps
                        and (step + 1) == len(epoch_iterator)):
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
                    self.global_step += 1
                    self.epoch = epoch + (step + 1) / len(epoch_iterator)

                    if self.args.logging_steps > 0 and self.global_step % self.args.logging_steps == 0:
                        logs = {}
                        tr_loss_scalar = tr_loss.item()
                        logs["loss"] = (tr_loss_scalar - logging_loss_scalar) / self.args.logging_steps
                        logs["learning_rate"] = self.lr_scheduler.get_last_lr()[0]
                        logging_loss_scalar = tr_loss_scalar
                        self.log(logs)
        self.tr_loss = tr_loss
        return self.global_step, tr_loss.item() / max(self.global_step, 1)


def make_dataset(n_batches=16, batch=8, seq=12, vocab_size=50):
    data = []
    for _ in range(n_batches):
        input_ids = torch.randint(1, vocab_size, (batch, seq))
        attention_mask = (torch.rand(batch, seq) > 0.2).float()
        attention_mask[:, 0] = 1.0
        labels = input_ids[:, 0] % 3
        data.append({"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels})
    return data


if __name__ == "__main__":
    trainer = Trainer(TinyForSequenceClassification(), TrainingArguments(), make_dataset())
    global_step, train_loss = trainer.train()
    print("global_step %d, train loss %.4f" % (global_step, train_loss))
    print("tr_loss keeps the graph of every step: %s" % (trainer.tr_loss.grad_fn is not None))
