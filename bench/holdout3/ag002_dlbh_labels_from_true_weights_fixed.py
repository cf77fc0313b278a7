# source: https://github.com/zhangyu2234/Deep-learning-by-hand
# symptom: Trying to backward through the graph a second time
# Clean twin: the true weights only generate data, so they are created without requires_grad (the notebook's fix).
import torch

from dlbh_utils.Common import DataLoader, loss, relu, sgd

torch.manual_seed(0)
num_samples = 40
num_features = 2
num_hiddens = 2
X = torch.randn((num_samples, num_features), dtype=torch.float32)
true_W = torch.randn((num_hiddens, 1), dtype=torch.float32)
true_b = torch.randn(1, dtype=torch.float32)
Y = torch.mm(X, true_W) + true_b


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
        l = loss(fc(x, W, b), y)
        l.backward()
        sgd([W, b], lr, batch_size)
    with torch.no_grad():
        print(f"epoch {epoch + 1}, loss {float(loss(fc(X, W, b), Y)):f}")
