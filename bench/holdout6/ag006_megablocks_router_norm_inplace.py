# source: https://github.com/databricks/megablocks/pull/70
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""MegaBlocks `LearnedRouter.forward` with `moe_normalize_expert_weights` set: the top-k expert weights are
normalised with `expert_weights /= torch.norm(expert_weights, p=..., dim=-1, keepdim=True)`, in place on the tensor
the norm itself saved for backward; the MoE layer then mixes the expert outputs with those weights."""
import dataclasses
from typing import Optional
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclasses.dataclass
class Arguments:
    hidden_size: int = 16
    ffn_hidden_size: int = 32
    moe_num_experts: int = 4
    moe_top_k: int = 2
    moe_normalize_expert_weights: Optional[float] = 1.0
    moe_jitter_eps: Optional[float] = 0.01
    moe_loss_weight: float = 0.1


class LearnedRouter(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.layer = nn.Linear(args.hidden_size, args.moe_num_experts, bias=False)

    def jitter(self, x):
        low, high = 1.0 - self.args.moe_jitter_eps, 1.0 + self.args.moe_jitter_eps
        noise = torch.rand(x.size(), dtype=x.dtype, device=x.device)
        return low + noise * (high - low)

    def _top_k(self, scores):
        if self.args.moe_top_k == 1:
            return scores.max(dim=-1)
        return torch.topk(scores, self.args.moe_top_k, dim=-1)

    def forward(self, x):
        if self.training and self.args.moe_jitter_eps is not None:
            x = x * self.jitter(x)
        scores = self.layer(x.view(-1, x.shape[-1])).softmax(dim=-1)
        expert_weights, expert_indices = self._top_k(scores)
        if self.args.moe_normalize_expert_weights:
            expert_weights /= torch.norm(  # expect: AG006
                expert_weights, p=self.args.moe_normalize_expert_weights, dim=-1, keepdim=True)
        return scores, expert_weights, expert_indices


class ExpertMLP(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.w1 = nn.Linear(args.hidden_size, args.ffn_hidden_size)
        self.w2 = nn.Linear(args.ffn_hidden_size, args.hidden_size)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class MoE(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.router = LearnedRouter(args)
        self.experts = nn.ModuleList([ExpertMLP(args) for _ in range(args.moe_num_experts)])

    def load_balancing_loss(self, scores, expert_indices):
        tokens_per_expert = torch.bincount(expert_indices.flatten(), minlength=self.args.moe_num_experts).float()
        return self.args.moe_num_experts * (scores.mean(0) * tokens_per_expert / expert_indices.numel()).sum()

    def forward(self, x):
        shape = x.shape
        scores, expert_weights, expert_indices = self.router(x)
        flat = x.view(-1, shape[-1])
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token_idx, slot = (expert_indices == e).nonzero(as_tuple=True)
            if token_idx.numel() == 0:
                continue
            y = expert(flat[token_idx]) * expert_weights[token_idx, slot].unsqueeze(-1)
            out = out.index_add(0, token_idx, y)
        lbl = self.load_balancing_loss(scores, expert_indices)
        return out.view(shape), lbl


class Block(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.norm = nn.LayerNorm(args.hidden_size)
        self.moe = MoE(args)
        self.head = nn.Linear(args.hidden_size, 10)

    def forward(self, x):
        h, lbl = self.moe(self.norm(x))
        return self.head((x + h).mean(1)), lbl


args = Arguments()
model = Block(args)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(2):
    x, y = torch.randn(4, 6, args.hidden_size), torch.randint(0, 10, (4,))
    logits, lbl = model(x)
    loss = F.cross_entropy(logits, y) + args.moe_loss_weight * lbl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
