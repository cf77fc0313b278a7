# source: written for bench/holdout17 from RULES.md AG013 (audio event trainer class: the weighted criterion's class weights are written as torch.ones[...] in __init__)
# symptom: object is not subscriptable
"""Audio event classifier over random log-mel patches with a rare-class weight."""
import torch
import torch.nn as nn


class EventTrainer:
    def __init__(self, model, n_classes, rare_class, lr=1e-3):
        self.model = model
        weights = torch.ones(n_classes)
        weights[rare_class] = 4.0
        self.criterion = nn.CrossEntropyLoss(weight=weights)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def fit(self, batches):
        for mel, label in batches:
            loss = self.criterion(self.model(mel), label)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Linear(8, 6))
trainer = EventTrainer(net, n_classes=6, rare_class=5)
batches = [(torch.randn(4, 1, 40, 32), torch.randint(0, 6, (4,))) for _ in range(3)]
print("final loss", trainer.fit(batches))
