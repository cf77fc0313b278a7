# source: https://github.com/yastrebksv/TennisCourtDetector/issues/7
# symptom: gradients accumulated across \d+ steps: True
# Clean twin: the author's fix, optimizer.zero_grad() before each forward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BallTrackerNet(nn.Module):
    def __init__(self, out_channels=15):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, out_channels, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.conv2(torch.relu(self.conv1(x))))


def train(model, train_loader, optimizer, criterion, device, epoch, max_iters=1000):
    model.train()
    losses = []
    for iter_id, batch in enumerate(train_loader):
        optimizer.zero_grad()
        out = model(batch[0].float().to(device))
        gt_hm_hp = batch[1].float().to(device)
        loss = criterion(torch.sigmoid(out), gt_hm_hp)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        print('train, epoch = {}, iter_id = {}/{}, loss = {}'.format(epoch, iter_id, len(train_loader), loss.item()))
        if iter_id > max_iters:
            break
    return sum(losses) / len(losses)


device = torch.device("cpu")
model = BallTrackerNet().to(device)
fresh = []
model.conv2.weight.register_hook(lambda g: fresh.append(g.clone()))
loader = [(torch.rand(2, 3, 16, 16), torch.rand(2, 15, 16, 16)) for _ in range(3)]
train(model, loader, torch.optim.Adam(model.parameters(), lr=1e-5), nn.MSELoss(), device, epoch=0)
accumulated = len(fresh) > 1 and torch.allclose(model.conv2.weight.grad, torch.stack(fresh).sum(0))
print(f"gradients accumulated across {len(fresh)} steps: {accumulated}")
