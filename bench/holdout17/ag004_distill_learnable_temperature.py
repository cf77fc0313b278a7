# source: written for bench/holdout17 from RULES.md AG004 (knowledge distillation with a learnable temperature created from an int literal)
# symptom: [Oo]nly Tensors of floating point (and complex )?dtype can require gradients
"""Distil a wide MLP teacher into a small student on random 'sensor' features, learning the softmax temperature."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 5)).eval()
student = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))

temperature = torch.tensor(4, requires_grad=True)  # expect: AG004
alpha = 0.7
optimizer = torch.optim.AdamW(list(student.parameters()) + [temperature], lr=3e-3)

for step in range(50):
    x = torch.randn(64, 20)
    y = torch.randint(0, 5, (64,))
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    T = temperature.clamp(1.0, 10.0)
    kd = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T * T
    loss = alpha * kd + (1 - alpha) * F.cross_entropy(s_logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.3f} T {temperature.item():.2f}")
