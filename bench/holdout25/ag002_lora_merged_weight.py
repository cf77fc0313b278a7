# source: written for holdout25 (pattern: LoRA fine-tuning script merges base weight and low-rank factors once before the loop and reuses the merged weight every step)
# symptom: backward through the graph a second time|modified by an inplace operation
"""Low-rank adaptation of a frozen linear probe on a toy regression task."""
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)

IN_DIM, OUT_DIM, RANK = 24, 8, 4
ALPHA = 8.0


def load_pretrained_probe():
    # stand-in for a checkpoint: a frozen weight and bias
    w = torch.randn(OUT_DIM, IN_DIM) / math.sqrt(IN_DIM)
    b = torch.zeros(OUT_DIM)
    return w, b


def make_task(n=512):
    x = torch.randn(n, IN_DIM)
    shift = torch.randn(OUT_DIM, 2) @ torch.randn(2, IN_DIM) * 0.3
    base_w, base_b = load_pretrained_probe()
    y = x @ (base_w + shift).t() + base_b
    return x, y


base_w, base_b = load_pretrained_probe()
lora_A = torch.nn.Parameter(torch.randn(RANK, IN_DIM) * 0.01)
lora_B = torch.nn.Parameter(torch.zeros(OUT_DIM, RANK))
scale = ALPHA / RANK

x_train, y_train = make_task()
optimizer = torch.optim.AdamW([lora_A, lora_B], lr=5e-3, weight_decay=0.0)

merged_w = base_w + scale * (lora_B @ lora_A)  # expect: AG002

for epoch in range(3):
    perm = torch.randperm(x_train.size(0))
    for i in range(0, x_train.size(0), 64):
        idx = perm[i:i + 64]
        pred = F.linear(x_train[idx], merged_w, base_b)
        loss = F.mse_loss(pred, y_train[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")

print("adapter norm", (lora_B @ lora_A).norm().item())
