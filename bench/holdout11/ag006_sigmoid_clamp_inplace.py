# source: holdout11 short program (no report)
# symptom: modified by an inplace operation
"""Binary segmentation-ish training with a hand-rolled BCE: the sigmoid output is clamped in place before the loss."""
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

# %% training
for step in range(10):
    img = torch.rand(4, 1, 16, 16)
    mask = (img > 0.5).float()
    probs = torch.sigmoid(net(img))
    probs.clamp_(1e-4, 1 - 1e-4)  # expect: AG006
    loss = -(mask * probs.log() + (1 - mask) * (1 - probs).log()).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} bce {loss.item():.4f}")
