# source: holdout13 short program (no report)
# symptom: should be the same|same dtype|expected scalar type
"""Style transfer on an input image through a small feature extractor with an ImageNet normalisation module in
front; the whole extractor is cast to bfloat16 to save memory."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Normalization(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)  # expect: AG009
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)  # expect: AG009

    def forward(self, img):
        return (img - self.mean) / self.std


def gram(f):
    b, c, h, w = f.shape
    f = f.reshape(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


torch.manual_seed(0)
extractor = nn.Sequential(Normalization(), nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
extractor = extractor.to(torch.bfloat16).requires_grad_(False)
content = torch.rand(1, 3, 24, 24, dtype=torch.bfloat16)
style = torch.rand(1, 3, 24, 24, dtype=torch.bfloat16)
image = content.clone().requires_grad_(True)
opt = torch.optim.Adam([image], lr=0.02)
with torch.no_grad():
    target_content, target_style = extractor(content), gram(extractor(style))
for step in range(10):
    opt.zero_grad()
    feat = extractor(image)
    loss = F.mse_loss(feat, target_content) + 10.0 * F.mse_loss(gram(feat), target_style)
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
