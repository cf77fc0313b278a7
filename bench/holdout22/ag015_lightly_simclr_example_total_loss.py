# source: https://github.com/lightly-ai/lightly/commit/9afcd667ffc604f8f2ac98130adf6dc74ea9e88e
# symptom: total_loss keeps the graph of every batch: True
"""lightly examples/pytorch/simclr.py before the fix: the epoch loop sums
`total_loss += loss` with the loss tensor itself, so `total_loss` holds the autograd
graph of every batch of the epoch until the epoch's average is printed.

Stand-ins: a small conv backbone instead of torchvision's resnet18, random image pairs
instead of CIFAR-10 with SimCLR augmentations, the NT-Xent loss (no memory bank) written
for this program.
"""
import torch
from torch import nn


class SimCLRProjectionHead(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.ReLU(),
                                    nn.Linear(hidden_dim, output_dim))

    def forward(self, x):
        return self.layers(x)


class NTXentLoss(nn.Module):
    def __init__(self, temperature=0.5):
        super().__init__()
        self.temperature = temperature
        self.cross_entropy = nn.CrossEntropyLoss(reduction="mean")

    def forward(self, out0, out1):
        batch_size, _ = out0.shape
        out0 = nn.functional.normalize(out0, dim=1)
        out1 = nn.functional.normalize(out1, dim=1)
        output = torch.cat((out0, out1), dim=0)
        logits = torch.einsum("nc,mc->nm", output, output) / self.temperature
        logits = logits[~torch.eye(2 * batch_size, dtype=torch.bool)].view(2 * batch_size, -1)
        labels = torch.arange(batch_size, dtype=torch.long)
        labels = torch.cat([labels + batch_size - 1, labels])
        return self.cross_entropy(logits, labels)


class SimCLR(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.projection_head = SimCLRProjectionHead(32, 32, 16)

    def forward(self, x):
        x = self.backbone(x).flatten(start_dim=1)
        z = self.projection_head(x)
        return z


torch.manual_seed(0)
backbone = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
model = SimCLR(backbone)

device = "cpu"
model.to(device)

images = torch.rand(64, 3, 16, 16)
pairs = [((img + 0.05 * torch.randn_like(img), img.flip(-1)), 0, "") for img in images]


def collate_fn(batch):
    x0 = torch.stack([b[0][0] for b in batch])
    x1 = torch.stack([b[0][1] for b in batch])
    return (x0, x1), torch.zeros(len(batch)), [b[2] for b in batch]


dataloader = torch.utils.data.DataLoader(pairs, batch_size=16, collate_fn=collate_fn,
                                         shuffle=True, drop_last=True)

criterion = NTXentLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.06)

print("Starting Training")
for epoch in range(2):
    total_loss = 0
    for (x0, x1), _, _ in dataloader:
        x0 = x0.to(device)
        x1 = x1.to(device)
        z0 = model(x0)
        z1 = model(x1)
        loss = criterion(z0, z1)
        total_loss += loss  # expect: AG015
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    avg_loss = total_loss / len(dataloader)
    print(f"epoch: {epoch:>02}, loss: {avg_loss:.5f}")
print("total_loss keeps the graph of every batch:", total_loss.grad_fn is not None)
