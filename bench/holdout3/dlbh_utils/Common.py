"""Helpers of the Deep-learning-by-hand notebook (utils/Common.py): relu, squared loss, minibatch SGD, a loader."""
import torch


def relu(x):
    return torch.max(x, torch.zeros_like(x))


def loss(y_hat, y):
    return ((y_hat - y.reshape(y_hat.shape)) ** 2 / 2).sum()


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


class DataLoader:
    def __init__(self, X, Y, batch_size, shuffle=True):
        self.X, self.Y, self.batch_size, self.shuffle = X, Y, batch_size, shuffle

    def __iter__(self):
        n = len(self.X)
        order = torch.randperm(n) if self.shuffle else torch.arange(n)
        for i in range(0, n, self.batch_size):
            idx = order[i:i + self.batch_size]
            yield self.X[idx], self.Y[idx]
