# source: written for bench/holdout5 (short training program, residual MLP classifier, nn.Module forward)
# symptom: modified by an inplace operation
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)


class ResidualNet(nn.Module):
    def __init__(self, dim=32, n_classes=5):
        super().__init__()
        self.inp = nn.Linear(8, dim)
        self.fc = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, n_classes)

    def forward(self, x):
        h = self.inp(x)
        a = torch.tanh(self.fc(h))
        a += h  # expect: AG006
        return self.out(a)


net = ResidualNet()
opt = torch.optim.AdamW(net.parameters(), lr=3e-3)
xs = torch.randn(128, 8)
ys = torch.randint(0, 5, (128,))

for epoch in range(10):
    for i in range(0, 128, 32):
        logits = net(xs[i:i + 32])
        loss = F.cross_entropy(logits, ys[i:i + 32])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
