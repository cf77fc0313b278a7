# source: written for holdout25 (pattern: class-imbalance weights for CrossEntropyLoss written as torch.tensor[...] instead of torch.tensor([...]))
# symptom: 'builtin_function_or_method' object is not subscriptable
"""Imbalanced three-class problem trained with a weighted cross-entropy."""
import torch
import torch.nn as nn


def make_imbalanced(n=600):
    y = torch.multinomial(torch.tensor([0.7, 0.2, 0.1]), n, replacement=True)
    x = torch.randn(n, 6) + y.unsqueeze(1).float()
    return x, y


def build(lr=5e-3):
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3))
    class_weights = torch.tensor[1.0, 3.5, 7.0]  # expect: AG013
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return model, criterion, optimizer


def main():
    torch.manual_seed(0)
    x, y = make_imbalanced()
    model, criterion, optimizer = build()
    for epoch in range(10):
        for i in range(0, len(x), 60):
            loss = criterion(model(x[i:i + 60]), y[i:i + 60])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    preds = model(x).argmax(1)
    for c in range(3):
        print(f"class {c} recall {(preds[y == c] == c).float().mean().item():.2f}")


if __name__ == "__main__":
    main()
