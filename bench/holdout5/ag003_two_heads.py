# source: written for bench/holdout5 (short training program, multi-task network with two heads and one backward per task)
# symptom: modified by an inplace operation
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(6)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, 4)
        self.reg_head = nn.Linear(32, 1)

    def forward(self, x):
        z = self.trunk(x)
        return self.cls_head(z), self.reg_head(z)


model = MultiTask()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = [(torch.randn(16, 10), torch.randint(0, 4, (16,)), torch.randn(16, 1)) for _ in range(5)]

for epoch in range(3):
    for x, labels, values in data:
        logits, reg = model(x)
        cls_loss = F.cross_entropy(logits, labels)
        reg_loss = F.mse_loss(reg, values)
        optimizer.zero_grad()
        cls_loss.backward(retain_graph=True)  # expect: AG003
        optimizer.step()
        reg_loss.backward()
    print(f"epoch {epoch}: cls {cls_loss.item():.3f} reg {reg_loss.item():.3f}")
