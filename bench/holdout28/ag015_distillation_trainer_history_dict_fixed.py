# source: written for holdout28 (pattern: knowledge-distillation trainer appends each step's loss tensor to a history dict for the end-of-epoch report)
# symptom: loss keeps graph of every batch: True
"""Distil a wide teacher MLP into a narrow student on a synthetic 5-class task.

Loss = alpha * KL(student_T || teacher_T) * T^2 + (1 - alpha) * CE(student, y).

Fixed: the history stores loss.item() (a float), not the loss tensor.
"""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class DistillTrainer:
    def __init__(self, teacher, student, T=3.0, alpha=0.7):
        self.teacher = teacher.eval()
        self.student = student
        self.opt = torch.optim.Adam(student.parameters(), lr=3e-3)
        self.T, self.alpha = T, alpha
        self.history = defaultdict(list)

    def kd_loss(self, s_logits, t_logits):
        return F.kl_div(F.log_softmax(s_logits / self.T, 1), F.softmax(t_logits / self.T, 1),
                        reduction="batchmean") * self.T ** 2

    def train_step(self, x, y):
        with torch.no_grad():
            t_logits = self.teacher(x)
        s_logits = self.student(x)
        loss = self.alpha * self.kd_loss(s_logits, t_logits) + (1 - self.alpha) * F.cross_entropy(s_logits, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.history["train_loss"].append(loss.item())

    def epoch_report(self, epoch):
        losses = self.history["train_loss"]
        avg = sum(losses) / len(losses)
        print(f"epoch {epoch} avg distillation loss {float(avg):.4f}")


torch.manual_seed(0)
W = torch.randn(16, 5)
X = torch.randn(640, 16)
Y = (X @ W).argmax(1)
teacher = nn.Sequential(nn.Linear(16, 256), nn.ReLU(), nn.Linear(256, 5))
t_opt = torch.optim.Adam(teacher.parameters(), lr=3e-3)
for _ in range(100):
    t_loss = F.cross_entropy(teacher(X), Y)
    t_opt.zero_grad()
    t_loss.backward()
    t_opt.step()

trainer = DistillTrainer(teacher, nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 5)))
for epoch in range(3):
    for i in range(0, 640, 64):
        trainer.train_step(X[i:i + 64], Y[i:i + 64])
    trainer.epoch_report(epoch)
kept = [l for l in trainer.history["train_loss"] if getattr(l, "grad_fn", None) is not None]
print(f"loss keeps graph of every batch: {len(kept) == len(trainer.history['train_loss'])}")
