# source: https://github.com/pytorch/pytorch/issues/733
# symptom: torch\.range is deprecated
"""pytorch/pytorch#733: `torch.range(a, b)` includes `b`, while Python's `range` and `numpy.arange` do not
("this is confusing"); the outcome was `torch.arange` and the deprecation of `torch.range`. Here a
training script builds its sample indices with `torch.range(0, n)` as if it were Python's range, so the
last minibatch asks for sample `n` of an `n`-sample dataset."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def minibatches(n, batch_size):
    order = torch.range(0, n).long()  # expect: AG011
    order = order[torch.randperm(len(order))]
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


def main():
    n, batch_size = 40, 8
    X = torch.randn(n, 5)
    y = X @ torch.randn(5, 1) + 0.1 * torch.randn(n, 1)
    model = nn.Linear(5, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        total = 0.0
        for idx in minibatches(n, batch_size):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(X[idx]), y[idx])
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch}: loss {total / n:.4f}")


if __name__ == "__main__":
    main()
