# source: https://github.com/fastai/fastbook/pull/471
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
"""fastbook `04_mnist_basics`: the 3-vs-7 linear model's `weights` come from `init_params(...)`, which calls
`.requires_grad_()`; the cell that shows how a tiny weight change moves the accuracy does `weights[0] *= 1.0001`
on that leaf, before the SGD loop of `calc_grad` / `train_epoch` / `validate_epoch`."""
import torch

torch.manual_seed(0)


def make_split(n):
    threes = torch.rand(n, 28 * 28) * 0.5 + 0.3 * (torch.arange(28 * 28) % 3 == 0)
    sevens = torch.rand(n, 28 * 28) * 0.5 + 0.3 * (torch.arange(28 * 28) % 7 == 0)
    x = torch.cat([threes, sevens])
    y = torch.tensor([1] * n + [0] * n).unsqueeze(1)
    return x, y


train_x, train_y = make_split(64)
valid_x, valid_y = make_split(16)
dl = [(train_x[idx], train_y[idx]) for idx in torch.randperm(len(train_x)).split(32)]
valid_dl = [(valid_x, valid_y)]


def init_params(size, std=1.0):
    return (torch.randn(size) * std).requires_grad_()


weights = init_params((28 * 28, 1))
bias = init_params(1)


def linear1(xb):
    return xb @ weights + bias


preds = linear1(train_x)
corrects = (preds > 0.0).float() == train_y
print("accuracy before the nudge:", corrects.float().mean().item())

weights[0] *= 1.0001  # expect: AG001
preds = linear1(train_x)
print("accuracy after the nudge:", ((preds > 0.0).float() == train_y).float().mean().item())


def mnist_loss(predictions, targets):
    predictions = predictions.sigmoid()
    return torch.where(targets == 1, 1 - predictions, predictions).mean()


def calc_grad(xb, yb, model):
    preds = model(xb)
    loss = mnist_loss(preds, yb)
    loss.backward()


def train_epoch(model, lr, params):
    for xb, yb in dl:
        calc_grad(xb, yb, model)
        for p in params:
            p.data -= p.grad * lr
            p.grad.zero_()


def batch_accuracy(xb, yb):
    preds = xb.sigmoid()
    correct = (preds > 0.5) == yb
    return correct.float().mean()


def validate_epoch(model):
    accs = [batch_accuracy(model(xb), yb) for xb, yb in valid_dl]
    return round(torch.stack(accs).mean().item(), 4)


lr = 1.0
params = weights, bias
for i in range(5):
    train_epoch(linear1, lr, params)
    print(validate_epoch(linear1), end=" ")
print()
