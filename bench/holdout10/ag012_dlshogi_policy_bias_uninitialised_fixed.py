# source: https://github.com/TadaoYamaoka/DeepLearningShogi/issues/42
# symptom: loss nan
"""dlshogi policy/value network with the policy head's `Bias` initialised: it starts from `torch.zeros(shape)` (the issue
names the uninitialised `torch.Tensor(shape)`; its fixing commit was not read).

Deterministic mode (which fills uninitialised memory with NaN) is kept, as in the bug program."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)

FEATURES1_NUM = 8
MAX_MOVE_LABEL_NUM = 5
k = 16
fcl = 32  # fully connected layers


class Bias(nn.Module):
    def __init__(self, shape):
        super(Bias, self).__init__()
        self.bias = nn.Parameter(torch.zeros(shape))

    def forward(self, input):
        return input + self.bias


class PolicyValueNetwork(nn.Module):
    def __init__(self):
        super(PolicyValueNetwork, self).__init__()
        self.l1 = nn.Conv2d(in_channels=FEATURES1_NUM, out_channels=k, kernel_size=3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(k, eps=2e-05)
        self.l2 = nn.Conv2d(in_channels=k, out_channels=k, kernel_size=3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(k, eps=2e-05)
        # policy network
        self.l22 = nn.Conv2d(in_channels=k, out_channels=MAX_MOVE_LABEL_NUM, kernel_size=1, bias=False)
        self.l22_2 = Bias(9 * 9 * MAX_MOVE_LABEL_NUM)
        # value network
        self.l22_v = nn.Conv2d(in_channels=k, out_channels=MAX_MOVE_LABEL_NUM, kernel_size=1)
        self.l23_v = nn.Linear(9 * 9 * MAX_MOVE_LABEL_NUM, fcl)
        self.l24_v = nn.Linear(fcl, 1)

    def forward(self, x):
        h1 = F.relu(self.norm1(self.l1(x)))
        h2 = F.relu(self.norm2(self.l2(h1)))
        # policy network
        h22 = self.l22(h2)
        h22_1 = self.l22_2(torch.flatten(h22, 1))
        # value network
        h22_v = F.relu(self.l22_v(h2))
        h23_v = F.relu(self.l23_v(torch.flatten(h22_v, 1)))
        return h22_1, self.l24_v(h23_v)


def make_batch(batch_size=16):
    x = torch.rand(batch_size, FEATURES1_NUM, 9, 9)
    t1 = torch.randint(0, 9 * 9 * MAX_MOVE_LABEL_NUM, (batch_size,))
    t2 = torch.randint(0, 2, (batch_size, 1)).float()
    return x, t1, t2


model = PolicyValueNetwork()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
cross_entropy_loss = nn.CrossEntropyLoss()
bce_with_logits_loss = nn.BCEWithLogitsLoss()

model.train()
for step in range(20):
    x, t1, t2 = make_batch()
    y1, y2 = model(x)
    loss = cross_entropy_loss(y1, t1) + bce_with_logits_loss(y2, t2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")
print(f"final loss {loss.item():.4f}")
