# source: written for bench/holdout17 from RULES.md AG016 (trainer class: fit() loops over batches and calls _optimize(), which backpropagates and steps but never zeroes)
# symptom: gradients accumulated: True
"""Speaker-ID model on random MFCC sequences, trained by a class with separate forward/optimise methods."""
import torch
import torch.nn as nn


class SpeakerNet(nn.Module):
    def __init__(self, n_mfcc=20, n_spk=8):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(n_mfcc, 32, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1))
        self.fc = nn.Linear(32, n_spk)

    def forward(self, mfcc):
        return self.fc(self.conv(mfcc).squeeze(-1))


class SpeakerTrainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.criterion = nn.CrossEntropyLoss()
        self.carried = False

    def _compute_loss(self, batch):
        mfcc, spk = batch
        return self.criterion(self.model(mfcc), spk)

    def _optimize(self, loss):
        self.carried |= any(p.grad is not None and p.grad.abs().sum() > 0 for p in self.model.parameters())
        loss.backward()
        self.opt.step()  # expect: AG016

    def fit(self, batches, epochs=2):
        for epoch in range(epochs):
            for batch in batches:
                loss = self._compute_loss(batch)
                self._optimize(loss)
            print("epoch", epoch, round(loss.item(), 4))


torch.manual_seed(0)
batches = [(torch.randn(4, 20, 50), torch.randint(0, 8, (4,))) for _ in range(4)]
trainer = SpeakerTrainer(SpeakerNet())
trainer.fit(batches)
print("gradients accumulated:", trainer.carried)
