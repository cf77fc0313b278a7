# source: written for bench/holdout16 from RULES.md AG004 (helper builds a learnable pruning mask from a comparison and calls requires_grad_())
# symptom: (?i)only Tensors of floating point (and complex )?dtype can require gradients
"""Learn a soft channel mask for pruning a conv layer of an image classifier (start from a random keep-mask)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_channel_mask(conv, keep_ratio):
    scores = torch.rand(conv.out_channels)
    mask = (scores < keep_ratio)
    return mask.requires_grad_()  # expect: AG004


class MaskedCNN(nn.Module):
    def __init__(self, keep_ratio=0.7):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)
        self.mask_logits = make_channel_mask(self.conv, keep_ratio)

    def forward(self, x):
        h = F.relu(self.conv(x)) * self.mask_logits.view(1, -1, 1, 1)
        return self.fc(h.mean((2, 3)))


model = MaskedCNN()
opt = torch.optim.SGD(list(model.parameters()) + [model.mask_logits], lr=0.1)
for it in range(5):
    x, y = torch.randn(32, 1, 12, 12), torch.randint(0, 10, (32,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y) + 1e-3 * model.mask_logits.abs().sum()
    loss.backward()
    opt.step()
    print(f"iter {it} loss {loss.item():.4f}")
