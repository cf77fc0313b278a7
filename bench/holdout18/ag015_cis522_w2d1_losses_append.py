# source: https://github.com/CIS-522/course-content/pull/2
# symptom: losses keep the graph of every epoch: True
"""CIS-522 W2D1 tutorial ("Deep Linear Networks"), sections 3.5 and 4: linear regression trained first from scratch
(leaf tensors `w`, `b`, a `gradient_descent` helper that updates them under `torch.no_grad()`), then with
`nn.Sequential(nn.Linear(1, 1))` and SGD. Both loops record the loss of every epoch with `losses.append(l)`, a tensor
that still holds its graph, and the next cell's `plt.plot(range(num_epochs), losses)` fails converting the list
("Can't call numpy() on Tensor that requires grad"). This program has no matplotlib; it reports whether the recorded
losses still carry their graph. The notebook's tqdm progress bar is replaced by a print every 100 epochs."""
import torch
from torch import nn


def linear_regression(X, w, b):
    reg = w * X + b
    return reg


def squared_error(y_hat, y):
    err = (y_hat - y) ** 2
    return err


def gradient_descent(w, b, lr):
    with torch.no_grad():
        w -= w.grad * lr
        b -= b.grad * lr
        # Set gradient to zero to flush the cache
        w.grad.zero_()
        b.grad.zero_()
    return (w, b)


torch.manual_seed(0)
N = 50
original_w, original_b = 1.2, -0.5
X = torch.linspace(-1, 1, N).reshape(1, -1)
y = (original_w * X + original_b + 0.1 * torch.randn(1, N)).reshape(-1, 1)

graph_kept = False

# Section 3.5: Training
lr = 1e-2  # learning rate
num_epochs = 300  # number of epochs (updates)
net = linear_regression
loss = squared_error

y_train = y.squeeze()  # to avoid wrong broadcasting

w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)

losses = []

for epoch in range(num_epochs):
    if losses and epoch % 100 == 0:
        print("loss: {:.6f}".format(losses[-1]))

    y_hat = net(X, w, b)
    l = loss(y_hat, y_train).mean()  # Loss in `X` and `y`

    # Compute gradient on `l` with respect to `w`, `b`
    l.backward()
    w, b = gradient_descent(w, b, lr)  # Update parameters using their gradient

    losses.append(l)  # expect: AG015

graph_kept = graph_kept or any(t.grad_fn is not None for t in losses)

# Section 4: Linear regression using Pytorch's Sequential class
net = nn.Sequential(nn.Linear(1, 1))

nn.init.zeros_(net[0].weight)
nn.init.zeros_(net[0].bias)

loss = nn.MSELoss()

optimizer = torch.optim.SGD(net.parameters(), lr=1e-2)

losses = []

for epoch in range(num_epochs):
    if losses and epoch % 100 == 0:
        print("loss: {:.6f}".format(losses[-1]))

    l = loss(net(X.T), y)
    l.backward()
    optimizer.step()
    optimizer.zero_grad()
    l = loss(net(X.T), y)
    losses.append(l)  # expect: AG015

graph_kept = graph_kept or any(t.grad_fn is not None for t in losses)
print("losses keep the graph of every epoch:", graph_kept)
