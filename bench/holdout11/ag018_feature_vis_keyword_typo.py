# source: holdout11 short program (no report)
# symptom: invalid combination of arguments|unexpected keyword argument
"""Feature visualisation after training a small CNN: the input image to optimise is created with a misspelled requires_grad keyword."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(128, 5))
opt = torch.optim.Adam(cnn.parameters(), lr=1e-3)
for step in range(20):
    x, y = torch.rand(16, 3, 16, 16), torch.randint(0, 5, (16,))
    opt.zero_grad()
    loss = F.cross_entropy(cnn(x), y)
    loss.backward()
    opt.step()
print(f"classifier loss {loss.item():.4f}")

# maximise the logit of class 2 with respect to the input
cnn.eval()
for p in cnn.parameters():
    p.requires_grad_(False)
img = torch.rand(1, 3, 16, 16, requires_grads=True)  # expect: AG018
img_opt = torch.optim.Adam([img], lr=0.05)
for step in range(30):
    img_opt.zero_grad()
    score = cnn(img)[0, 2] - 0.01 * img.pow(2).sum()
    (-score).backward()
    img_opt.step()
    with torch.no_grad():
        img.clamp_(0, 1)
print(f"class-2 score {score.item():.3f}")
