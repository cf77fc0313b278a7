"""AG009 fixed: the constants are registered as buffers, so .to()/.cuda() move them with the module.
Observed in torch 2.13: runs clean; after model.to(...) mean/std sit on the weights' device and are in state_dict()."""
import torch
import torch.nn as nn


class NormalizedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]))
        self.conv = nn.Conv2d(3, 4, kernel_size=3, padding=1)

    def forward(self, images):
        images = (images - self.mean[:, None, None]) / self.std[:, None, None]
        return self.conv(images)


torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = NormalizedConv().to(device)
out = model(torch.rand(2, 3, 8, 8, device=device))
print(out.shape, sorted(model.state_dict()))
