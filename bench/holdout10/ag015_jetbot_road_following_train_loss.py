# source: https://github.com/NVIDIA-AI-IOT/jetbot/pull/117
# symptom: train_loss keeps the graph of every batch: True
"""JetBot `road_following/train_model.ipynb`: the notebook sums `train_loss += loss` and `test_loss += loss` with the
loss tensors themselves, so every batch's graph stays alive until the epoch ends (the pull request: GPU memory runs out
on a Jetson Nano with a few hundred images)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class XYDataset(torch.utils.data.Dataset):
    """Camera frames labelled with the (x, y) target the robot should steer to."""

    def __init__(self, n=48):
        self.images = torch.rand(n, 3, 32, 32)
        self.xy = torch.rand(n, 2) * 2 - 1

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        return self.images[idx], self.xy[idx]


dataset = XYDataset()
train_dataset, test_dataset = torch.utils.data.random_split(dataset, [len(dataset) - 12, 12])
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=8, shuffle=True, num_workers=0)
test_loader = torch.utils.data.DataLoader(test_dataset, batch_size=8, shuffle=True, num_workers=0)

# a small stand-in for models.resnet18(pretrained=True) with a new 2-output fc
backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
model = nn.Sequential(backbone, nn.Linear(8, 2))
device = torch.device('cpu')
model = model.to(device)

NUM_EPOCHS = 3
BEST_MODEL_PATH = None  # the notebook saves 'best_steering_model_xy.pth'
best_loss = 1e9
optimizer = optim.Adam(model.parameters())

for epoch in range(NUM_EPOCHS):
    model.train()
    train_loss = 0.0
    for images, labels in iter(train_loader):
        images = images.to(device)
        labels = labels.to(device)
        optimizer.zero_grad()
        outputs = model(images)
        loss = F.mse_loss(outputs, labels)
        train_loss += loss  # expect: AG015
        loss.backward()
        optimizer.step()
    train_loss /= len(train_loader)

    model.eval()
    test_loss = 0.0
    for images, labels in iter(test_loader):
        images = images.to(device)
        labels = labels.to(device)
        outputs = model(images)
        loss = F.mse_loss(outputs, labels)
        test_loss += loss  # expect: AG015
    test_loss /= len(test_loader)

    print('%f, %f' % (train_loss, test_loss))
    if test_loss < best_loss:
        best_state = {k: v.clone() for k, v in model.state_dict().items()}
        best_loss = test_loss

print(f"train_loss keeps the graph of every batch: {torch.is_tensor(train_loss) and train_loss.grad_fn is not None}")
