# source: written for bench/holdout5 (short training program, from-scratch MLP with hand-made parameters)
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def make_layer(n_in, n_out):
    bound = 1.0 / math.sqrt(n_in)
    weight = torch.empty(n_out, n_in, requires_grad=True)
    bias = torch.zeros(n_out, requires_grad=True)
    with torch.no_grad():
        weight.uniform_(-bound, bound)
    return weight, bias


def forward(params, x):
    (w1, b1), (w2, b2) = params
    h = F.relu(F.linear(x, w1, b1))
    return F.linear(h, w2, b2)


def accuracy(params, x, y):
    with torch.no_grad():
        return (forward(params, x).argmax(dim=1) == y).float().mean().item()


params = [make_layer(4, 16), make_layer(16, 3)]
flat = [t for layer in params for t in layer]
opt = torch.optim.SGD(flat, lr=0.1)

x = torch.randn(64, 4)
y = torch.randint(0, 3, (64,))

for epoch in range(20):
    opt.zero_grad()
    loss = F.cross_entropy(forward(params, x), y)
    loss.backward()
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}")

print("train accuracy:", accuracy(params, x, y))
