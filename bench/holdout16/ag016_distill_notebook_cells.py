# source: written for bench/holdout16 from RULES.md AG016 (notebook-style top-level cells: knowledge distillation loop with a frozen teacher, the student's gradients are never zeroed)
# symptom: gradients carried over from the previous step: True
"""Distil a larger tabular MLP (teacher) into a small student with temperature-scaled KL (notebook cells)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# %% teacher (pretend it is pre-trained)
teacher = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 3)).eval()
student = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))
T, alpha = 4.0, 0.7

# %% optimiser
student_optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)

# %% distillation loop
carried = False
for step in range(6):
    x, y = torch.randn(32, 12), torch.randint(0, 3, (32,))
    with torch.no_grad():
        soft_targets = F.softmax(teacher(x) / T, dim=-1)
    logits = student(x)
    kd = F.kl_div(F.log_softmax(logits / T, dim=-1), soft_targets, reduction="batchmean") * T * T
    loss = alpha * kd + (1 - alpha) * F.cross_entropy(logits, y)
    carried |= student[0].weight.grad is not None and bool(student[0].weight.grad.abs().sum() > 0)
    loss.backward()
    student_optimizer.step()  # expect: AG016
    print(f"step {step} loss {loss.item():.4f}")

# %% report
print(f"gradients carried over from the previous step: {carried}")
