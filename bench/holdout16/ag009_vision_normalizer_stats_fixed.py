# source: written for bench/holdout16 from RULES.md AG009 (input-normalisation module stores ImageNet mean/std as plain tensors; the checkpoint is saved from state_dict)
# symptom: normalisation stats in checkpoint: False
"""Image classifier whose first layer normalises inputs; the checkpoint is saved and reloaded for inference
(fixed: mean and std are registered buffers)."""
import io
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Normalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, -1, 1, 1))

    def forward(self, x):
        return (x - self.mean) / self.std


def build_model(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
    return nn.Sequential(Normalize(mean, std), nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))


model = build_model()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    x, y = torch.rand(16, 3, 24, 24), torch.randint(0, 3, (16,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
ckpt = torch.load(buf)
restored = build_model(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
restored.load_state_dict(ckpt)
print(f"normalisation stats in checkpoint: {'0.mean' in ckpt}")
