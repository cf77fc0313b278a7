# source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# Clean twin: the thread's fix, nn.Dropout(dropout, inplace=False).
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super().__init__()
        layers = [
            weight_norm(nn.Linear(in_dim, hid_dim), dim=None),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=False),
            weight_norm(nn.Linear(hid_dim, out_dim), dim=None),
        ]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


class BaseModel(nn.Module):
    def __init__(self, num_hid=16, num_ans=5):
        super().__init__()
        self.q_net = nn.Linear(12, num_hid)
        self.v_net = nn.Linear(10, num_hid)
        self.classifier = SimpleClassifier(num_hid, num_hid * 2, num_ans, 0.5)

    def forward(self, v, q):
        joint_repr = self.q_net(q) * self.v_net(v).mean(1)
        return self.classifier(joint_repr)


def train(model, train_loader, num_epochs=1):
    optim = torch.optim.Adamax(model.parameters())
    for epoch in range(num_epochs):
        for i, (v, q, a) in enumerate(train_loader):
            pred = model(v, q)
            loss = nn.functional.binary_cross_entropy_with_logits(pred, a)
            loss.backward()
            optim.step()
            optim.zero_grad()
            print(epoch, i, loss.item())


torch.manual_seed(0)
train(BaseModel(), [(torch.randn(4, 3, 10), torch.randn(4, 12), torch.rand(4, 5)) for _ in range(2)])
