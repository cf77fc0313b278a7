# source: https://blog.csdn.net/cyj972628089/article/details/122732509 (pattern: softmax-regression training defines nn.CrossEntropyLoss(reduction='none') and calls backward on the per-sample loss vector)
# symptom: grad can be implicitly created only for scalar outputs
"""d2l-style softmax regression: train_epoch helper, loss from CrossEntropyLoss(reduction='none')."""
import torch
import torch.nn as nn

torch.manual_seed(0)

num_inputs, num_outputs = 20, 5
net = nn.Sequential(nn.Flatten(), nn.Linear(num_inputs, num_outputs))
loss = nn.CrossEntropyLoss(reduction='none')
trainer = torch.optim.SGD(net.parameters(), lr=0.1)

features = torch.randn(64, num_inputs)
labels = torch.randint(0, num_outputs, (64,))


def data_iter(batch_size):
    for i in range(0, len(features), batch_size):
        yield features[i:i + batch_size], labels[i:i + batch_size]


def accuracy(y_hat, y):
    return (y_hat.argmax(dim=1) == y).float().sum().item()


def train_epoch(net, train_iter, loss, updater):
    net.train()
    total, correct, n = 0.0, 0.0, 0
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        updater.zero_grad()
        l.backward()  # expect: AG005
        updater.step()
        total += float(l.sum())
        correct += accuracy(y_hat, y)
        n += y.numel()
    return total / n, correct / n


for epoch in range(3):
    train_loss, train_acc = train_epoch(net, data_iter(16), loss, trainer)
    print(f"epoch {epoch + 1}, loss {train_loss:.3f}, train acc {train_acc:.3f}")
