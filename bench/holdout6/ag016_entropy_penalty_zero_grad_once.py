# source: https://github.com/salesforce/corr_based_prediction/issues/1
# symptom: gradients accumulated across steps: True
"""Entropy-penalty training (corr_based_prediction main.py, as the issue saw it): `train(epoch)` calls
`optimizer.zero_grad()` once before the batch loop; inside it every batch does forward, cross-entropy plus
`beta * entropy_reg(hidden, targets)`, backward and `optimizer.step()`, so gradients pile up over the epoch."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class CNN(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x, ret_hid=False, train=True):
        hid = self.features(x)
        out = self.fc(hid)
        if ret_hid:
            return out, hid
        return out


def entropy_reg(hid_repr, targets, num_classes=4):
    """Penalise the spread of each class's hidden representation around its class mean."""
    reg = hid_repr.new_zeros(())
    for c in range(num_classes):
        rows = hid_repr[targets == c]
        if rows.size(0) > 1:
            reg = reg + ((rows - rows.mean(0, keepdim=True)) ** 2).mean()
    return reg


class Args:
    beta = 0.1
    lr = 1e-3
    wdecay = 1e-4
    epochs = 2


args = Args()
model = CNN()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.wdecay)
trainloader = [(torch.randn(8, 3, 8, 8), torch.randint(0, 4, (8,))) for _ in range(4)]
accumulated = False


def train(epoch):
    global accumulated
    model.train()
    total_loss, tot_reg = 0.0, 0.0
    optimizer.zero_grad()
    for inputs, targets in trainloader:
        outputs, hid_repr = model(inputs, ret_hid=True)
        loss = criterion(outputs, targets)
        regularization_loss = entropy_reg(hid_repr, targets)
        tot_reg += regularization_loss.item()
        total_loss_ = loss + args.beta * regularization_loss
        if any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters()):
            accumulated = True
        total_loss_.backward()
        total_loss += loss.item()
        optimizer.step()  # expect: AG016
    return total_loss / len(trainloader), tot_reg / len(trainloader)


for epoch in range(1, args.epochs + 1):
    loss, reg = train(epoch)
    print(f"Epoch {epoch} | Loss {loss:.4f} | reg_loss {reg:.4f}")
print(f"gradients accumulated across steps: {accumulated}")
