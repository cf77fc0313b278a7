# source: https://github.com/qubvel-org/segmentation_models.pytorch/pull/611
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
# The PR adds a `threshold` to DiceLoss; utils.functional._threshold then binarises the prediction with
# (x > threshold).type(x.dtype) before f_score, so the loss has no grad_fn and backward raises.
import torch
import torch.nn as nn

from smp_lib.losses import DiceLoss

torch.manual_seed(0)

model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 1))
loss = DiceLoss(activation="sigmoid", threshold=0.5)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.randn(2, 3, 16, 16)
masks = (torch.rand(2, 2, 16, 16) > 0.5).float()


def train_epoch(model, loss, optimizer, batches):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        prediction = model(x)
        loss_value = loss(prediction, y)
        loss_value.backward()  # expect: AG010
        optimizer.step()
        print("dice loss", loss_value.item())


train_epoch(model, loss, optimizer, [(images, masks)])
