# source: https://github.com/pytorch/pytorch/issues/55980 (pattern: model forward writes x[0, :, 0, 0] = x[0, :, 0, 0] * var into the conv output, overwriting the slice that MulBackward saved)
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Two conv branches; the flattened second branch rescales one pixel column of the first."""
import torch

torch.manual_seed(0)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(12, 12, 3)

    def forward(self, x, y):
        x = self.conv(x)
        y = self.conv(y)
        var = y.flatten()
        x[0, :, 0, 0] = x[0, :, 0, 0] * var  # expect: AG006

        loss = torch.mean(x)
        var.register_hook(lambda grad: print("var grad", grad.sum()))
        return loss


model = Model()

x = torch.ones([1, 12, 3, 3]).float()
y = torch.ones([1, 12, 3, 3]).float()
loss = model(x, y)

loss.backward()
print("conv weight grad norm:", model.conv.weight.grad.norm().item())
