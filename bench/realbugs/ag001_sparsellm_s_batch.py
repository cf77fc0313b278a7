# source: https://github.com/BaiTheBest/SparseLLM/issues/13
# symptom: a leaf Variable that requires grad is being used in an in-place operation
# SparseLLM optimises the auxiliary activations s chunk by chunk with hand-written gradient steps:
# loss_s.backward(); s_batch -= s_learning_rate * s_batch.grad, on a chunk leaf that requires grad. Re-created as that helper.
import torch
import torch.nn as nn


def optimize_s_chunks(s, z, W_next, target, s_learning_rate=0.05, chunk_size=4, steps=3):
    """Refine the auxiliary variable s so that W_next(s) matches target while s stays close to relu(z)."""
    for start in range(0, s.shape[1], chunk_size):
        chunk = slice(start, start + chunk_size)
        s_batch = s[:, chunk].detach().clone().float().requires_grad_(True)
        for _ in range(steps):
            full = s.detach().clone().float()
            full[:, chunk] = s_batch
            loss_s = ((full @ W_next.t() - target) ** 2).mean() + ((s_batch - torch.relu(z[:, chunk])) ** 2).mean()
            loss_s.backward()
            s_batch -= s_learning_rate * s_batch.grad  # expect: AG001
            s_batch.grad.zero_()
        s[:, chunk] = s_batch.detach().to(dtype=s.dtype)
    return s


torch.manual_seed(0)
layer = nn.Linear(16, 12)
next_layer = nn.Linear(12, 8)
x = torch.randn(32, 16)
with torch.no_grad():
    z = layer(x)
    s = torch.relu(z)
    target = next_layer(s) + 0.1 * torch.randn(32, 8)
s = optimize_s_chunks(s, z, next_layer.weight.detach(), target)
print("s updated", s.shape)
