# source: https://github.com/Miraclelucy/dive_into_deep_learning/issues/6
# symptom: gradients carried over from the previous step: True
"""dive_into_deep_learning `ch02/04-softmax-linear-regression-concise.py`: its `train_ch3` zeroes the
gradients only on the hand-written SGD path (`if params is not None ...: param.grad.data.zero_()`); the
concise version passes `params=None` and `optimizer=torch.optim.SGD(...)`, so `l.backward()` keeps adding
into the old gradients before every `optimizer.step()`. The issue asks why this still trains; the
reporter's own copy of the loop without `zero_grad()` drifted to 10% accuracy. The program records
whether a step's backward started from non-zero gradients.

Fixed the way the d2l book's own `train_ch3` does it: `optimizer.zero_grad()` before each backward
when an optimizer is given (the issue is unanswered)."""
import torch
from torch import nn

torch.manual_seed(0)


def load_data(batch_size=64, n=512):
    X = torch.rand(n, 1, 28, 28)
    y = torch.randint(0, 10, (n,))
    train = [(X[i:i + batch_size], y[i:i + batch_size]) for i in range(0, n, batch_size)]
    return train, train[:2]


def evaluate_accuracy(data_iter, net):
    acc_sum, n = 0.0, 0
    with torch.no_grad():
        for X, y in data_iter:
            acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
            n += y.shape[0]
    return acc_sum / n


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size


def train_ch3(net, train_iter, test_iter, loss, num_epochs, batch_size, params=None, lr=None, optimizer=None):
    carried = False
    for epoch in range(num_epochs):
        train_l_sum, train_acc_sum, n = 0.0, 0.0, 0
        for X, y in train_iter:
            y_hat = net(X)
            l = loss(y_hat, y).sum()
            if optimizer is not None:
                optimizer.zero_grad()
            elif params is not None and params[0].grad is not None:
                for param in params:
                    param.grad.zero_()
            carried = carried or any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in net.parameters())
            l.backward()
            if optimizer is not None:
                optimizer.step()
            else:
                sgd(params, lr, batch_size)
            train_l_sum += l.item()
            train_acc_sum += (y_hat.argmax(dim=1) == y).sum().item()
            n += y.shape[0]
        test_acc = evaluate_accuracy(test_iter, net)
        print("epoch %d, loss %.4f, train acc %.3f, test acc %.3f"
              % (epoch + 1, train_l_sum / n, train_acc_sum / n, test_acc))
    print(f"gradients carried over from the previous step: {carried}")


def main():
    batch_size = 64
    train_iter, test_iter = load_data(batch_size)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))

    def init_weight(m):
        if type(m) == nn.Linear:
            nn.init.normal_(m.weight, std=0.01)

    net.apply(init_weight)
    loss = nn.CrossEntropyLoss(reduction="none")
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    train_ch3(net, train_iter, test_iter, loss, 3, batch_size, None, 0.3, optimizer)


if __name__ == "__main__":
    main()
