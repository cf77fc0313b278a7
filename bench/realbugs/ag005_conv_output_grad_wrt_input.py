# source: https://stackoverflow.com/questions/54754153/autograd-grad-for-tensor-in-pytorch/54757383
# symptom: grad can be implicitly created only for scalar outputs
# The asker sends an input X (batch_size x m) through convolutional layers that give back Y (batch_size x n) and,
# for a new loss, wants the gradient of Y with respect to X (as tf.gradients(ys=Y, xs=X)); calling
# torch.autograd.grad(Y, X) on the non-scalar Y raised. Re-created with a small 1-d conv net over X.
import torch
import torch.nn as nn
from torch.autograd import grad


class ConvNet(nn.Module):
    def __init__(self, m=16, n=4):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(1, 4, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv1d(4, 4, kernel_size=3, padding=1), nn.ReLU(),
        )
        self.fc = nn.Linear(4 * m, n)

    def forward(self, x):
        h = self.conv(x.unsqueeze(1))
        return self.fc(h.flatten(1))


batch_size, m, n = 8, 16, 4
net = ConvNet(m, n)
X = torch.randn(batch_size, m, requires_grad=True)
Y = net(X)
dY_dX = grad(outputs=Y, inputs=X)  # expect: AG005
print(dY_dX[0].shape)
