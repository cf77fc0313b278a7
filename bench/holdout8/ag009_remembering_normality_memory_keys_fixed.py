# source: https://github.com/SimonThomine/RememberingNormality/issues/7
# symptom: memory keys and values trained: False
"""RememberingNormality memoryModule: `self.keys = torch.randn(L, channel).to('cuda')` and
`self.values = ...` are plain tensor attributes of the module, not Parameters, so they are not in
model.parameters(), the optimizer never sees them and they stay at their random initialisation (they
also would not follow model.to(device)); the author fixed it by wrapping them in nn.Parameter.

Written for bench/holdout8 with the structure of the repository's memory module (cosine-similarity
read of the memory over the spatial positions of a feature map, normality switch) inside a small
student network trained against a frozen teacher's features for a few steps on random 32x32 images;
the `.to('cuda')` is dropped on the CPU.

Twin: the fix the issue asks for (keys and values wrapped in nn.Parameter), which the author says he
applied in commit 1d99145 (the diff was not read).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class memoryModule(nn.Module):
    def __init__(self, L=50, channel=128, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.keys = nn.Parameter(torch.randn(L, channel))
        self.values = nn.Parameter(torch.randn(L, channel))
        self.softmax = nn.Softmax(dim=1)
        self.channel = channel

    def forward(self, x: Tensor, normality=False) -> Tensor:
        b, c, h, w = x.size()
        x = x.view(x.size(0), x.size(1), -1).permute(0, 2, 1)
        if not normality:
            keysAct = self.keys.unsqueeze(0).expand(x.size(0), -1, -1)
            norm_keys = F.normalize(keysAct, p=2, dim=2)
            norm_x = F.normalize(x, p=2, dim=2)
            cos_sim = torch.matmul(norm_keys.unsqueeze(2), norm_x.transpose(1, 2).unsqueeze(1)).squeeze(2)
            sim_vec = self.softmax(cos_sim)
            valuesAct = self.values.unsqueeze(0).expand(x.size(0), -1, -1)
        else:
            valuesAct = self.values.unsqueeze(0).expand(x.size(0), -1, -1)
            norm_values = F.normalize(valuesAct, p=2, dim=2)
            norm_x = F.normalize(x, p=2, dim=2)
            cos_sim = torch.matmul(norm_values.unsqueeze(2), norm_x.transpose(1, 2).unsqueeze(1)).squeeze(2)
            sim_vec = self.softmax(cos_sim)
        Fnorm = torch.matmul(sim_vec.permute(0, 2, 1), valuesAct)
        return Fnorm.permute(0, 2, 1).reshape(b, self.channel, h, w)


class Student(nn.Module):
    def __init__(self, channel=16, L=10):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, channel, 3, 2, 1), nn.BatchNorm2d(channel), nn.ReLU(),
                                     nn.Conv2d(channel, channel, 3, 2, 1), nn.BatchNorm2d(channel), nn.ReLU())
        self.memory = memoryModule(L=L, channel=channel)
        self.fuse = nn.Conv2d(2 * channel, channel, 1)

    def forward(self, x):
        f = self.encoder(x)
        return self.fuse(torch.cat([f, self.memory(f)], dim=1))


def distillation_loss(student_features, teacher_features):
    return torch.mean(1 - F.cosine_similarity(student_features, teacher_features, dim=1))


def main():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 16, 3, 2, 1)).eval()
    for p in teacher.parameters():
        p.requires_grad = False
    student = Student()
    keys_before = student.memory.keys.detach().clone()
    values_before = student.memory.values.detach().clone()
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)
    for step in range(3):
        images = torch.rand(4, 3, 32, 32)
        with torch.no_grad():
            target = teacher(images)
        loss = distillation_loss(student(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")
    trained = not (torch.equal(keys_before, student.memory.keys.detach())
                   and torch.equal(values_before, student.memory.values.detach()))
    print("memory keys and values trained:", trained)


if __name__ == "__main__":
    main()
