# source: written for bench/holdout16 from RULES.md AG007 (self-distillation trainer copies student prototypes to the teacher under no_grad by plain assignment)
# symptom: teacher prototypes require grad: True
"""Prototype-based self-distillation (DINO-like, tiny): the teacher's prototypes are refreshed from the student each epoch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ProtoHead(nn.Module):
    def __init__(self, dim=16, n_proto=8):
        super().__init__()
        self.proj = nn.Linear(32, dim)
        self.prototypes = nn.Parameter(torch.randn(n_proto, dim))

    def forward(self, x, prototypes=None):
        protos = self.prototypes if prototypes is None else prototypes
        return F.normalize(self.proj(x), dim=-1) @ F.normalize(protos, dim=-1).T


class SelfDistiller:
    def __init__(self):
        self.student = ProtoHead()
        self.opt = torch.optim.SGD(self.student.parameters(), lr=0.1)
        self.refresh_teacher()

    def refresh_teacher(self):
        with torch.no_grad():
            self.teacher_protos = self.student.prototypes  # expect: AG007

    def train_epoch(self, views):
        for a, b in views:
            self.opt.zero_grad()
            t = F.softmax(self.student(a, self.teacher_protos) / 0.04, dim=-1)
            s = F.log_softmax(self.student(b) / 0.1, dim=-1)
            loss = -(t * s).sum(-1).mean()
            loss.backward()
            self.opt.step()
        self.refresh_teacher()
        return loss.item()


d = SelfDistiller()
views = [(torch.randn(16, 32), torch.randn(16, 32)) for _ in range(3)]
for epoch in range(2):
    print(f"epoch {epoch} loss {d.train_epoch(views):.4f}")
print(f"teacher prototypes require grad: {d.teacher_protos.requires_grad}")
