# source: written for bench/holdout16 from RULES.md AG016 (trainer class with CPU autocast (bfloat16) and a warmup scheduler; the training step never zeroes gradients)
# symptom: gradients accumulated: True
"""News-topic classification with a tiny transformer encoder under CPU autocast and linear warmup
(fixed: the step zeroes the gradients before the forward)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TopicModel(nn.Module):
    def __init__(self, vocab=300, dim=32, n_topics=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=64, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=1)
        self.cls = nn.Linear(dim, n_topics)

    def forward(self, tokens):
        return self.cls(self.enc(self.emb(tokens)).mean(1))


class AmpTrainer:
    def __init__(self, model, args):
        self.model, self.args = model, args
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args["lr"])
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: min(1.0, (s + 1) / args["warmup"]))
        self.accumulated = False

    def training_step(self, tokens, labels):
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = self.model(tokens)
        loss = F.cross_entropy(logits.float(), labels)
        self.accumulated |= any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in self.model.parameters())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args["max_norm"])
        self.optimizer.step()
        self.scheduler.step()
        return loss.item()


trainer = AmpTrainer(TopicModel(), {"lr": 5e-4, "warmup": 3, "max_norm": 1.0})
for step in range(4):
    tokens, labels = torch.randint(0, 300, (8, 20)), torch.randint(0, 4, (8,))
    print(f"step {step} loss {trainer.training_step(tokens, labels):.4f}")
print(f"gradients accumulated: {trainer.accumulated}")
