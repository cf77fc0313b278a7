# source: https://github.com/zhangyu2234/Deep-learning-by-hand
# symptom: Trying to backward through the graph a second time
# The notebook's fully connected net: the synthetic labels Y = X @ true_W + true_b are built once, before the
# training loop, from true_W/true_b created with requires_grad=True, so every minibatch's loss reaches back into
# that one graph and the second l.backward() fails ("I made consecutive calls to the same calculation graph").
import torch

from dlbh_utils.Common import DataLoader, loss, relu, sgd

torch.manual_seed(0)
num_samples = 40
num_features = 2
num_hiddens = 2
X = torch.randn((num_samples, num_features), dtype=torch.float32)
true_W = torch.randn((num_hiddens, 1), requires_grad=True, dtype=torch.float32)
true_b = torch.randn(1, requires_grad=True, dtype=torch.float32)
Y = torch.mm(X, true_W) + true_b  # expect: AG002


def fc(x, w, b):
    return relu(torch.mm(x, w) + b)


W = torch.normal(0, 0.01, size=(num_hiddens, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
batch_size = 20
lr = 0.01
num_epochs = 2
dataloader = DataLoader(X, Y, batch_size, shuffle=True)
for epoch in range(num_epochs):
    for x, y in dataloader:
        l = loss(fc(x, W, b), y)  # expect: AG002
        l.backward()
        sgd([W, b], lr, batch_size)
    print(f"epoch {epoch + 1}, loss {float(loss(fc(X, W, b), Y)):f}")
