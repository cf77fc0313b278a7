# source: holdout13 short program (no report)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""LoRA-style adapter on a frozen linear layer, fine-tuned on a small regression task.

`reset_parameters()` (called from `__init__`) re-initialises the adapter so that the up-projection starts at zero and
the adapted layer equals the base layer at step 0.


Clean twin: `reset_parameters()` zeroes the up-projection inside `with torch.no_grad():`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int = 4, alpha: float = 8.0):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.lora_a = nn.Parameter(torch.randn(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.randn(base.out_features, rank))
        self.scale = alpha / rank
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.lora_a, a=5 ** 0.5)
        with torch.no_grad():
            self.lora_b.zero_()

    def forward(self, x):
        return self.base(x) + (x @ self.lora_a.t() @ self.lora_b.t()) * self.scale


torch.manual_seed(0)
model = LoRALinear(nn.Linear(16, 8))
opt = torch.optim.AdamW([model.lora_a, model.lora_b], lr=1e-2)
x = torch.randn(64, 16)
y = torch.randn(64, 8)
for step in range(50):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print(f"final loss {loss.item():.4f}")
