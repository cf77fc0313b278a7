# source: https://github.com/learnables/learn2learn/issues/271
# symptom: you can only change requires_grad flags of leaf variables
# MAML for super-resolution: inside each task the user runs the cloned model, computes the adaptation loss and only
# then freezes task_model.meta_block (p.requires_grad = False) before adapt(); the toggle comes after the forward.
import torch
import torch.nn as nn
import torch.nn.functional as F

from maml_lib import MAML

torch.manual_seed(0)


class SRNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(1, 8, 3, padding=1)
        self.meta_block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.tail = nn.Conv2d(8, 4, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        return self.shuffle(self.tail(self.meta_block(self.head(x))))


maml = MAML(SRNet(), lr=0.01)
opt = torch.optim.Adam(maml.parameters(), lr=1e-3)
l1_loss = F.l1_loss

for iteration in range(2):
    low_res = torch.rand(2, 1, 8, 8)
    gt = torch.rand(2, 1, 16, 16)
    opt.zero_grad()
    task_model = maml.clone()
    output = task_model(low_res)
    adaptation_loss = l1_loss(gt, output)
    # Freeze parameter
    for name, p in task_model.module.meta_block.named_parameters():
        p.requires_grad = False  # expect: AG014
    task_model.adapt(adaptation_loss)
    adapted_output = task_model(low_res)
    evaluation_loss = l1_loss(gt, adapted_output)
    evaluation_loss.backward()
    opt.step()
    print(iteration, evaluation_loss.item())
