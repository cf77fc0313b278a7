# source: holdout13 short program (no report)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Neural style transfer on an input image with L-BFGS and a closure; the image is kept in [0, 1] after each step.

Clean twin: the image is clamped inside `with torch.no_grad():`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
for p in features.parameters():
    p.requires_grad_(False)


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


content = torch.rand(1, 3, 32, 32)
style = torch.rand(1, 3, 32, 32)
with torch.no_grad():
    content_feat = features(content)
    style_gram = gram(features(style))

image = content.clone().requires_grad_(True)
optimizer = torch.optim.LBFGS([image], lr=0.5, max_iter=5)

for it in range(4):
    def closure():
        optimizer.zero_grad()
        feat = features(image)
        loss = F.mse_loss(feat, content_feat) + 1e3 * F.mse_loss(gram(feat), style_gram)
        loss.backward()
        return loss

    loss = optimizer.step(closure)
    with torch.no_grad():
        image.clamp_(0.0, 1.0)
    print(f"iter {it} loss {loss.item():.5f}")
