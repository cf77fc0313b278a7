# source: written for bench/holdout16 from RULES.md AG015 (trainer class appends each step's loss tensor to self.history for a plot at the end of the epoch)
# symptom: loss history keeps a graph: True
"""Music genre classification from mel frames with a 1-D conv net; the trainer keeps a loss history for plotting."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GenreNet(nn.Module):
    def __init__(self, n_mels=32, n_genres=5):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, 32, 5, padding=2)
        self.fc = nn.Linear(32, n_genres)

    def forward(self, mel):
        return self.fc(F.relu(self.conv(mel)).amax(-1))


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=2, gamma=0.5)
        self.history = []

    def train_step(self, mel, genre):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(mel), genre)
        loss.backward()
        self.optimizer.step()
        self.history.append(loss)  # expect: AG015
        return loss

    def epoch(self, loader):
        for mel, genre in loader:
            self.train_step(mel, genre)
        self.scheduler.step()
        mean = sum(h.item() for h in self.history[-len(loader):]) / len(loader)
        print(f"epoch mean loss {mean:.4f} lr {self.scheduler.get_last_lr()[0]:.2e}")


loader = [(torch.randn(8, 32, 40), torch.randint(0, 5, (8,))) for _ in range(4)]
trainer = Trainer(GenreNet())
for _ in range(2):
    trainer.epoch(loader)
print(f"loss history keeps a graph: {trainer.history[0].grad_fn is not None}")
