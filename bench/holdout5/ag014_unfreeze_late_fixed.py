# source: written for bench/holdout5 (short training program, fine-tuning with a backbone unfrozen after warm-up)
import torch
from torch import nn

torch.manual_seed(25)

backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
head = nn.Linear(32, 3)
for p in backbone.parameters():
    p.requires_grad = False

optimizer = torch.optim.SGD([
    {"params": backbone.parameters(), "lr": 1e-3},
    {"params": head.parameters(), "lr": 1e-2},
])
X = torch.randn(64, 10)
y = torch.randint(0, 3, (64,))
UNFREEZE_AT = 3

for epoch in range(6):
    if epoch == UNFREEZE_AT:
        for p in backbone.parameters():
            p.requires_grad = True
    logits = head(backbone(X))
    loss = nn.functional.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    if epoch == UNFREEZE_AT:
        print("backbone grad at unfreeze step:", backbone[0].weight.grad)
    optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
