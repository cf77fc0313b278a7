# source: written for bench/holdout5 (short training program, self-supervised consistency with a stop-gradient target)
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(13)

encoder = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 8))
predictor = nn.Linear(8, 8)
opt = torch.optim.Adam(list(encoder.parameters()) + list(predictor.parameters()), lr=1e-3)


def augment(x):
    return x + 0.1 * torch.randn_like(x)


data = torch.randn(64, 12)
for step in range(20):
    z1 = encoder(augment(data))
    z2 = encoder(augment(data))
    with torch.no_grad():
        target = z2.detach()
    p1 = predictor(z1)
    loss = -F.cosine_similarity(p1, target, dim=-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.4f}")

print("target requires grad:", target.requires_grad)
