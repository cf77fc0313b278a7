"""AG009 (seed 002): normalisation constants stored as plain tensor attributes in __init__ instead of buffers.
Observed in torch 2.13 (CPU): silent; model.to(device) moves the conv weights but leaves mean/std behind, and they are not in state_dict()."""
import torch
import torch.nn as nn


class NormalizedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.485, 0.456, 0.406])  # expect: AG009
        self.std = torch.tensor([0.229, 0.224, 0.225])  # expect: AG009
        self.conv = nn.Conv2d(3, 4, kernel_size=3, padding=1)

    def forward(self, images):
        images = (images - self.mean[:, None, None]) / self.std[:, None, None]
        return self.conv(images)


torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = NormalizedConv().to(device)
out = model(torch.rand(2, 3, 8, 8, device=device))
print(out.shape, sorted(model.state_dict()))
