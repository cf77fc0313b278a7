# source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# The post's forward(): b = torch.mm(self.param, a), then in a loop b[i] = b[i] + 1 and y = y + torch.mm(self.param, b);
# mm saved b, and the next iteration's assignment changes it in place. Re-created as that module and one training step.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(torch.randn(10, 10) * 0.1)

    def forward(self, a):
        y = 0
        b = torch.mm(self.param, a)
        for i in range(10):
            b[i] = b[i] + 1  # expect: AG006
            y = y + torch.mm(self.param, b)
        return y


torch.manual_seed(0)
model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
a = torch.randn(10, 1)
optimizer.zero_grad()
loss = model(a).pow(2).sum()
loss.backward()
optimizer.step()
print(loss.item())
