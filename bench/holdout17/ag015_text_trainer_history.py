# source: written for bench/holdout17 from RULES.md AG015 (trainer class appends each step's loss tensor to self.history for the epoch summary)
# symptom: loss history keeps a graph: True
"""Intent classifier (bag of embeddings) with a Trainer that logs per-step losses."""
import statistics
import torch
import torch.nn as nn


class IntentModel(nn.Module):
    def __init__(self, vocab=1000, dim=64, n_intents=7):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.fc = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, n_intents))

    def forward(self, tokens):
        return self.fc(self.emb(tokens))


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.history = []

    def training_step(self, batch):
        tokens, labels = batch
        loss = nn.functional.cross_entropy(self.model(tokens), labels)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for batch in loader:
                loss = self.training_step(batch)
                self.history.append(loss)  # expect: AG015
            print(f"epoch {epoch}: mean loss {statistics.mean(float(l) for l in self.history):.4f}")


torch.manual_seed(0)
loader = [(torch.randint(0, 1000, (16, 12)), torch.randint(0, 7, (16,))) for _ in range(5)]
trainer = Trainer(IntentModel())
trainer.fit(loader, epochs=2)
print("loss history keeps a graph:", any(l.grad_fn is not None for l in trainer.history))
