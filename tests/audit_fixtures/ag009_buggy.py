import torch
import torch.nn as nn


class Shifted(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.offset = torch.ones(2)  # audit-expect: AG009

    def forward(self, x):
        return self.lin(x) + self.offset


model = Shifted().double()
print(model(torch.randn(3, 2, dtype=torch.float64)).dtype)
