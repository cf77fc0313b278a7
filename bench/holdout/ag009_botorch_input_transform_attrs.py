# source: https://github.com/meta-pytorch/botorch/pull/1035
# symptom: offset after \.to\(torch\.float64\): torch\.float32.*in state_dict: False
# botorch's input transforms kept their tensor attributes as plain self.attr = tensor, so Module.to(...) does not
# touch them ("we manually need to call module.attr.to(...)") and they are not saved; the PR registers them as buffers.
import torch
import torch.nn as nn


class InputTransform(nn.Module):
    def forward(self, X):
        return self.transform(X)


class Normalize(InputTransform):
    def __init__(self, d, learn_bounds=True):
        super().__init__()
        self.d = d
        self.learn_bounds = learn_bounds
        self.offset = torch.zeros(1, d)  # expect: AG009
        self.coefficient = torch.ones(1, d)  # expect: AG009

    def transform(self, X):
        if self.learn_bounds and self.training:
            self.offset = X.min(dim=-2, keepdim=True).values
            self.coefficient = X.max(dim=-2, keepdim=True).values - self.offset
        return (X - self.offset) / self.coefficient


class Model(nn.Module):
    def __init__(self, d=3):
        super().__init__()
        self.input_transform = Normalize(d)
        self.mean = nn.Linear(d, 1)

    def forward(self, X):
        return self.mean(self.input_transform(X))


model = Model().to(torch.float64)
print("offset after .to(torch.float64):", model.input_transform.offset.dtype,
      "| in state_dict:", "input_transform.offset" in model.state_dict())
model.eval()
print(model(torch.rand(4, 3, dtype=torch.float64)).dtype)
