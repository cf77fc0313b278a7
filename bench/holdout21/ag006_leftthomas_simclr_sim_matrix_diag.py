# source: https://github.com/leftthomas/SimCLR/commit/fac6ed01778dba14a9e20da3deadcb8d4def5359
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""leftthomas/SimCLR train.py before "fix inplace bug": `train` builds
`sim_matrix = torch.exp(torch.mm(out, out.t().contiguous()) / temperature)` and then zeroes its
diagonal in place, `sim_matrix[torch.eye(2 * batch_size, ...).bool()] = 0.0`; exp saved its
output for backward, so `loss.backward()` fails."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Model(nn.Module):
    def __init__(self, feature_dim=16):
        super(Model, self).__init__()
        # stand-in for the resnet18 trunk without its fc layer
        self.f = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                               nn.AdaptiveAvgPool2d(1))
        self.g = nn.Sequential(nn.Linear(8, feature_dim, bias=False), nn.ReLU(inplace=True),
                               nn.Linear(feature_dim, feature_dim, bias=False))

    def forward(self, x):
        x = self.f(x)
        feature = torch.flatten(x, start_dim=1)
        out = self.g(feature)
        return F.normalize(feature, dim=-1), F.normalize(out, dim=-1)


# train for one epoch to learn unique features
def train(net, data_loader, train_optimizer):
    net.train()
    total_loss, total_num = 0.0, 0
    for pos_1, pos_2, target in data_loader:
        feature_1, out_1 = net(pos_1)
        feature_2, out_2 = net(pos_2)
        # [2*B, D]
        out = torch.cat([out_1, out_2], dim=0)
        # [2*B, 2*B]
        sim_matrix = torch.exp(torch.mm(out, out.t().contiguous()) / temperature)
        sim_matrix[torch.eye(2 * batch_size, device=sim_matrix.device).bool()] = 0.0  # expect: AG006
        # compute loss
        pos_sim = torch.sum(out_1 * out_2, dim=-1)
        pos_sim = torch.cat([pos_sim, pos_sim], dim=0)
        loss = (- torch.log(pos_sim / sim_matrix.sum(dim=-1))).mean()
        train_optimizer.zero_grad()
        loss.backward()
        train_optimizer.step()
        total_num += batch_size
        total_loss += loss.item() * batch_size
    return total_loss / total_num


if __name__ == '__main__':
    torch.manual_seed(0)
    temperature, batch_size, epochs = 0.5, 4, 2
    data = [(torch.rand(batch_size, 3, 8, 8), torch.rand(batch_size, 3, 8, 8), torch.randint(0, 10, (batch_size,)))
            for _ in range(3)]
    model = Model(16)
    optimizer = optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)
    for epoch in range(1, epochs + 1):
        train_loss = train(model, data, optimizer)
        print('epoch', epoch, 'loss', train_loss)
