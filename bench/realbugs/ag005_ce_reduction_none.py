# source: http://hbase.cn/archives/1390.html
# symptom: grad can be implicitly created only for scalar outputs
# The author defined loss = nn.CrossEntropyLoss(reduction='none') and called loss.backward() on its per-sample
# output (shape [batch_size]). Re-created as a small training function using that criterion.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, x):
        return self.fc(x)


def train(net, train_iter, loss, num_epochs, lr):
    trainer = torch.optim.SGD(net.parameters(), lr=lr)
    for epoch in range(num_epochs):
        for X, y in train_iter:
            y_hat = net(X)
            l = loss(y_hat, y)
            trainer.zero_grad()
            l.backward()  # expect: AG005
            trainer.step()
        print("epoch", epoch)


torch.manual_seed(0)
train_iter = [(torch.randn(8, 20), torch.randint(0, 3, (8,))) for _ in range(4)]
loss = nn.CrossEntropyLoss(reduction="none")
train(Net(), train_iter, loss, num_epochs=2, lr=0.1)
