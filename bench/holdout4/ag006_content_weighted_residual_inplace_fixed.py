# source: https://github.com/pytorch/pytorch/issues/5687
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# Clean twin: the shortcut is added out of place (`out = out + residual`), so the ReLU output that ReluBackward
# saved stays intact (the user reports that dropping inplace=True helped on torch 0.3; on torch 2.13 it is the in-place
# add on the saved ReLU output that breaks backward, so the twin keeps the ReLUs and adds out of place).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out, shortcut=None):
        super().__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 16, 3, 1, 1),
            nn.ReLU(inplace=True),
            nn.Conv2d(16, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )
        self.right = shortcut

    def forward(self, x):
        out = self.left(x)
        residual = x if self.right is None else self.right(x)
        out = out + residual
        return F.relu(out, inplace=False)


class ContentWeightedCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 8, 4, 2, 1),
            nn.ReLU(inplace=True),
            ResidualBlock(8, 8),
            nn.Conv2d(8, 8, 3, 1, 1),
        )
        self.decoder = nn.Sequential(ResidualBlock(8, 8), nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


torch.manual_seed(0)
model = ContentWeightedCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    img = torch.rand(2, 3, 16, 16)
    rec = model(img)
    loss = F.mse_loss(rec, img)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
