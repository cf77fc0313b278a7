# source: https://github.com/sthalles/SimCLR/commit/af77a03f0b66f52ee4fdb75d55a04eea8bfcc8cc
# symptom: gradients carried over from the previous step: True
"""sthalles/SimCLR train.py after "fixed bug missing zero_grad()" (fixed): each step starts with
`optimizer.zero_grad()` before the two views are encoded, so `loss.backward()` writes only this
step's gradients before `optimizer.step()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class ResNetSimCLR(nn.Module):
    """stand-in for the ResNet-18 base with its projection MLP: returns (h, z)"""

    def __init__(self, out_dim=8):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.l1 = nn.Linear(8, 8)
        self.l2 = nn.Linear(8, out_dim)

    def forward(self, x):
        h = self.features(x)
        x = F.relu(self.l1(h))
        return h, self.l2(x)


def get_negative_mask(batch_size):
    negative_mask = torch.ones((batch_size, 2 * batch_size), dtype=bool)
    for i in range(batch_size):
        negative_mask[i, i] = 0
        negative_mask[i, i + batch_size] = 0
    return negative_mask


def _dot_simililarity_dim1(x, y):
    return torch.bmm(x.unsqueeze(1), y.unsqueeze(2))


def _dot_simililarity_dim2(x, y):
    return torch.tensordot(x.unsqueeze(1), y.T.unsqueeze(0), dims=2)


def get_similarity_function(use_cosine_similarity):
    return _dot_simililarity_dim1, _dot_simililarity_dim2


def DataTransform(x):
    return x + 0.1 * torch.randn_like(x), x.flip(-1)


config = {'batch_size': 4, 'out_dim': 8, 'temperature': 0.5, 'use_cosine_similarity': False, 'epochs': 2}
batch_size = config['batch_size']
temperature = config['temperature']
train_loader = [(DataTransform(torch.randn(batch_size, 3, 12, 12)), None) for _ in range(3)]

model = ResNetSimCLR(out_dim=config['out_dim'])
criterion = torch.nn.CrossEntropyLoss(reduction='sum')
optimizer = optim.Adam(model.parameters(), 3e-4)
sim_func_dim1, sim_func_dim2 = get_similarity_function(config['use_cosine_similarity'])
negative_mask = get_negative_mask(batch_size)

carried = False
n_iter = 0
for e in range(config['epochs']):
    for step, ((xis, xjs), _) in enumerate(train_loader):
        optimizer.zero_grad()

        before = model.l2.bias.grad
        ris, zis = model(xis)
        rjs, zjs = model(xjs)
        zis = F.normalize(zis, dim=1)
        zjs = F.normalize(zjs, dim=1)
        l_pos = sim_func_dim1(zis, zjs).view(batch_size, 1)
        l_pos /= temperature
        negatives = torch.cat([zjs, zis], dim=0)
        loss = 0
        for positives in [zis, zjs]:
            l_neg = sim_func_dim2(positives, negatives)
            labels = torch.zeros(batch_size, dtype=torch.long)
            l_neg = l_neg[negative_mask].view(l_neg.shape[0], -1)
            l_neg /= temperature
            logits = torch.cat([l_pos, l_neg], dim=1)
            loss += criterion(logits, labels)
        loss = loss / (2 * batch_size)
        fresh = torch.autograd.grad(loss, model.l2.bias, retain_graph=True)[0]
        loss.backward()
        if before is not None and before.abs().sum() > 0:
            carried = carried or not torch.allclose(model.l2.bias.grad, fresh)
        optimizer.step()
        n_iter += 1
print('loss', loss.item())
print('gradients carried over from the previous step:', carried)
