# source: https://github.com/pytorch/pytorch/issues/20905
# symptom: class counts differ from the label histogram: True
"""pytorch/pytorch#20905 "torch.empty(n, dtype=torch.int) produces non-deterministic arrays, not empty
ones": the reporter expected zeros and got leftover memory. Here the same call allocates the per-class
counters that weight a class-balanced loss, and the counters are incremented before anything wrote
them. Deterministic mode (`torch.utils.deterministic.fill_uninitialized_memory`) fills the memory with
the largest int, so the garbage shows on every run; the program compares the counts with
`torch.bincount`."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)


def class_counts(loader, num_classes):
    counts = torch.empty(num_classes, dtype=torch.int)  # expect: AG012
    for _, labels in loader:
        for label in labels:
            counts[label] += 1
    return counts


def main():
    num_classes = 4
    loader = [(torch.randn(16, 10), torch.randint(0, num_classes, (16,))) for _ in range(5)]
    counts = class_counts(loader, num_classes)
    reference = torch.bincount(torch.cat([labels for _, labels in loader]), minlength=num_classes)
    weights = counts.sum().float() / (num_classes * counts.float().clamp(min=1))
    model = nn.Linear(10, num_classes)
    criterion = nn.CrossEntropyLoss(weight=weights)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for x, labels in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), labels)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    print(f"class counts differ from the label histogram: {not torch.equal(counts.long(), reference)}")


if __name__ == "__main__":
    main()
