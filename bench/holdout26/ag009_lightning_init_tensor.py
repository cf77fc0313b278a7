# source: https://github.com/Lightning-AI/pytorch-lightning/issues/1978 (pattern: module builds a constant tensor in __init__ and keeps it as a plain attribute, so moving the model to another device/dtype leaves it behind)
# symptom: buffer left behind by \.to\(\): True
"""Skeleton-sequence classifier whose one-hot temporal encoding is built once in __init__."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitModel(nn.Module):
    def __init__(self, seg=20, num_joints=25, num_classes=10):
        super().__init__()
        self.seg = seg
        self.num_joints = num_joints
        self.tem = self.one_hot(seg, num_joints).permute(2, 0, 1)  # expect: AG009
        self.layer_1 = nn.Linear(3 + seg, 64)
        self.layer_2 = nn.Linear(64, num_classes)

    def one_hot(self, spa, tem):
        y = torch.arange(spa).unsqueeze(-1)
        y_onehot = torch.zeros(spa, spa)
        y_onehot.scatter_(1, y, 1)
        return y_onehot.unsqueeze(0).repeat(tem, 1, 1)

    def forward(self, x):
        # x: (batch, seg, joints, 3)
        b = x.shape[0]
        tem = self.tem.unsqueeze(0).expand(b, -1, -1, -1)
        h = torch.cat([x, tem.to(x.dtype)], dim=-1)
        h = F.relu(self.layer_1(h)).mean(dim=(1, 2))
        return self.layer_2(h)


model = LitModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(4, 20, 25, 3)
y = torch.randint(0, 10, (4,))
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# what the Lightning trainer does with the module: move it to the run's device/dtype
model = model.to(torch.float64)
print("weight dtype:", model.layer_1.weight.dtype, "tem dtype:", model.tem.dtype)
print("buffer left behind by .to():", model.tem.dtype != model.layer_1.weight.dtype)
print("tem in state_dict:", any(k.endswith("tem") for k in model.state_dict()))
