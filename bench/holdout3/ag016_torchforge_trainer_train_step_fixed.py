# source: https://github.com/meta-pytorch/torchforge/pull/71
# symptom: gradients accumulated across steps: True
# Clean twin: train_step zeroes the gradients after each step, the PR's fix.
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, vocab=16, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        return self.head(self.embed(tokens))


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.grad_norms = []

    def loss_fn(self, logits, response, advantages):
        logprobs = torch.log_softmax(logits, -1).gather(-1, response.unsqueeze(-1)).squeeze(-1)
        return -(logprobs * advantages.unsqueeze(-1)).mean()

    def train_step(self, batch):
        logits = self.model(batch["response"])
        loss = self.loss_fn(logits, batch["response"], batch["advantages"])
        loss.backward()
        self.grad_norms.append(self.model.head.weight.grad.norm().item())
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()


torch.manual_seed(0)
trainer = Trainer(Policy(), lr=0.0)
batch = {"response": torch.randint(0, 16, (2, 5)), "advantages": torch.tensor([1.0, -0.5])}
for step in range(3):
    trainer.train_step(batch)
norms = trainer.grad_norms
print("gradients accumulated across steps:", norms[2] > 2.5 * norms[0])
