# source: written for bench/holdout17 from RULES.md AG005 (image classifier with per-sample weights: reduction='none' criterion from a config, the weighted vector loss is backpropagated)
# symptom: grad can be implicitly created only for scalar outputs
"""Small CNN on random 'images' with per-sample difficulty weights (focal-like reweighting)."""
import torch
import torch.nn as nn

CONFIG = {"classes": 10, "lr": 0.01, "steps": 5, "batch": 16}


class SmallCNN(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, n_cls)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def sample_weights(logits, targets, gamma=2.0):
    with torch.no_grad():
        p = torch.softmax(logits, -1).gather(1, targets[:, None]).squeeze(1)
        return (1 - p) ** gamma


torch.manual_seed(0)
model = SmallCNN(CONFIG["classes"])
criterion = nn.CrossEntropyLoss(reduction="none")
optimizer = torch.optim.SGD(model.parameters(), lr=CONFIG["lr"], momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)

for step in range(CONFIG["steps"]):
    images = torch.randn(CONFIG["batch"], 3, 32, 32)
    targets = torch.randint(0, CONFIG["classes"], (CONFIG["batch"],))
    logits = model(images)
    loss = criterion(logits, targets) * sample_weights(logits, targets)
    optimizer.zero_grad()
    loss.backward()  # expect: AG005
    optimizer.step()
    scheduler.step()
    print(step, loss.mean().item())
