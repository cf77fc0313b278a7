# source: written for holdout28 (pattern: mean-teacher trainer deep-copies the student and updates the teacher's parameters with an in-place EMA outside no_grad)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Mean-teacher semi-supervised training on a toy two-moons-like problem.

The teacher is an exponential moving average of the student; its predictions on
unlabelled points give a consistency target.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_batch(n=64):
    x = torch.randn(n, 2)
    y = (x[:, 0] * x[:, 1] > 0).long()
    return x, y


class MeanTeacherTrainer:
    def __init__(self, ema_decay=0.99, lr=1e-2):
        self.student = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2))
        self.teacher = copy.deepcopy(self.student)
        self.optimizer = torch.optim.Adam(self.student.parameters(), lr=lr)
        self.ema_decay = ema_decay
        self.global_step = 0

    def update_teacher(self):
        decay = min(1.0 - 1.0 / (self.global_step + 1), self.ema_decay)
        for t_param, s_param in zip(self.teacher.parameters(), self.student.parameters()):
            t_param.mul_(decay).add_(s_param.detach(), alpha=1.0 - decay)  # expect: AG001

    def train_step(self, x_lab, y_lab, x_unlab):
        logits = self.student(x_lab)
        sup = F.cross_entropy(logits, y_lab)
        noisy = x_unlab + 0.05 * torch.randn_like(x_unlab)
        with torch.no_grad():
            target = F.softmax(self.teacher(x_unlab), dim=1)
        cons = F.mse_loss(F.softmax(self.student(noisy), dim=1), target)
        loss = sup + 0.5 * cons
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.global_step += 1
        self.update_teacher()
        return loss.item()


def main():
    torch.manual_seed(0)
    trainer = MeanTeacherTrainer()
    for step in range(30):
        x_lab, y_lab = make_batch(16)
        x_unlab, _ = make_batch(64)
        loss = trainer.train_step(x_lab, y_lab, x_unlab)
        if step % 10 == 0:
            print(f"step {step} loss {loss:.4f}")
    x, y = make_batch(256)
    with torch.no_grad():
        acc = (trainer.teacher(x).argmax(1) == y).float().mean().item()
    print(f"teacher accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
