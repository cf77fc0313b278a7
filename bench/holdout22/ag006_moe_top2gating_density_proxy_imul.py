# source: https://github.com/lucidrains/mixture-of-experts/commit/04201ee9d1add6913032b3cb75c7b59b289b16de
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""mixture-of-experts before the fix: in `Top2Gating.forward`, `density_1_proxy = raw_gates`
aliases the softmax output, and with an `importance` tensor (the inner gate of
`HeirarchicalMoE`) it is scaled in place, `density_1_proxy *= equals_one_mask[..., None]`.
Softmax saved its output for backward, so training the hierarchical MoE fails at
`loss.backward()`.

Written for this set with the structure of the library (gating, experts, two-level MoE);
stand-ins: a small regression loop on random tokens.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

MIN_EXPERT_CAPACITY = 4


def top1(t):
    values, index = t.topk(k=1, dim=-1)
    return values.squeeze(dim=-1), index.squeeze(dim=-1)


def cumsum_exclusive(t, dim=-2):
    padded = F.pad(t, (0, 0, 1, 0)).cumsum(dim=dim)
    return padded[..., :-1, :]


def safe_one_hot(indexes, max_length):
    max_index = indexes.max() + 1
    return F.one_hot(indexes, max(max_index + 1, max_length))[..., :max_length]


class Experts(nn.Module):
    def __init__(self, dim, num_experts, hidden_dim):
        super().__init__()
        std_in, std_hidden = 1 / math.sqrt(hidden_dim), 1 / math.sqrt(dim)
        self.w1 = nn.Parameter(torch.empty(*num_experts, dim, hidden_dim).uniform_(-std_in, std_in))
        self.w2 = nn.Parameter(torch.empty(*num_experts, hidden_dim, dim).uniform_(-std_hidden, std_hidden))
        self.act = nn.ReLU()

    def forward(self, x):
        hidden = self.act(torch.einsum('...nd,...dh->...nh', x, self.w1))
        return torch.einsum('...nh,...hd->...nd', hidden, self.w2)


class Top2Gating(nn.Module):
    def __init__(self, dim, num_gates, eps=1e-9, outer_expert_dims=tuple(),
                 second_threshold=0.2, capacity_factor=1.25):
        super().__init__()
        self.eps = eps
        self.num_gates = num_gates
        self.w_gating = nn.Parameter(torch.randn(*outer_expert_dims, dim, num_gates))
        self.threshold = second_threshold
        self.capacity_factor = capacity_factor

    def forward(self, x, importance=None):
        *_, b, group_size, dim = x.shape
        num_gates = self.num_gates

        raw_gates = torch.einsum('...bnd,...de->...bne', x, self.w_gating)
        raw_gates = raw_gates.softmax(dim=-1)

        gate_1, index_1 = top1(raw_gates)
        mask_1 = F.one_hot(index_1, num_gates).float()
        density_1_proxy = raw_gates

        if importance is not None:
            equals_one_mask = (importance == 1.).float()
            mask_1 *= equals_one_mask[..., None]
            gate_1 *= equals_one_mask
            density_1_proxy *= equals_one_mask[..., None]  # expect: AG006

        gates_without_top_1 = raw_gates * (1. - mask_1)
        gate_2, index_2 = top1(gates_without_top_1)
        mask_2 = F.one_hot(index_2, num_gates).float()
        if importance is not None:
            mask_2 *= (importance > 0.).float()[..., None]

        denom = gate_1 + gate_2 + self.eps
        gate_1 /= denom
        gate_2 /= denom

        # load-balancing loss
        density_1 = mask_1.mean(dim=-2)
        density_1_proxy = density_1_proxy.mean(dim=-2)
        loss = (density_1_proxy * density_1).mean() * float(num_gates ** 2)

        # 'random' policy for the second expert
        probs = torch.zeros_like(gate_2).uniform_(0., 1.)
        mask_2 *= (probs < (gate_2 / max(self.threshold, self.eps))).float().unsqueeze(-1)

        expert_capacity = min(group_size, int((group_size * self.capacity_factor) / num_gates))
        expert_capacity = max(expert_capacity, MIN_EXPERT_CAPACITY)

        position_in_expert_1 = cumsum_exclusive(mask_1) * mask_1
        mask_1 *= (position_in_expert_1 < float(expert_capacity)).float()
        mask_1_count = mask_1.sum(dim=-2, keepdim=True)
        mask_1_flat = mask_1.sum(dim=-1)
        position_in_expert_1 = position_in_expert_1.sum(dim=-1)
        gate_1 *= mask_1_flat

        position_in_expert_2 = cumsum_exclusive(mask_2) + mask_1_count
        position_in_expert_2 *= mask_2
        mask_2 *= (position_in_expert_2 < float(expert_capacity)).float()
        mask_2_flat = mask_2.sum(dim=-1)
        position_in_expert_2 = position_in_expert_2.sum(dim=-1)
        gate_2 *= mask_2_flat

        combine_tensor = (
            gate_1[..., None, None] * mask_1_flat[..., None, None]
            * F.one_hot(index_1, num_gates)[..., None]
            * safe_one_hot(position_in_expert_1.long(), expert_capacity)[..., None, :]
            + gate_2[..., None, None] * mask_2_flat[..., None, None]
            * F.one_hot(index_2, num_gates)[..., None]
            * safe_one_hot(position_in_expert_2.long(), expert_capacity)[..., None, :]
        )
        dispatch_tensor = combine_tensor.bool().to(combine_tensor)
        return dispatch_tensor, combine_tensor, loss


class HeirarchicalMoE(nn.Module):
    def __init__(self, dim, num_experts=(4, 4), hidden_dim=None, loss_coef=1e-2):
        super().__init__()
        self.num_experts_outer, self.num_experts_inner = num_experts
        self.gate_outer = Top2Gating(dim, num_gates=self.num_experts_outer)
        self.gate_inner = Top2Gating(dim, num_gates=self.num_experts_inner,
                                     outer_expert_dims=(self.num_experts_outer,))
        self.experts = Experts(dim, num_experts=num_experts, hidden_dim=hidden_dim or dim * 4)
        self.loss_coef = loss_coef

    def forward(self, inputs):
        b, n, d = inputs.shape
        eo, ei = self.num_experts_outer, self.num_experts_inner
        dispatch_outer, combine_outer, loss_outer = self.gate_outer(inputs)
        expert_inputs_outer = torch.einsum('bnd,bnec->ebcd', inputs, dispatch_outer)

        # importance: 1.0 for the first-choice expert group, 0.5 for the second choice
        importance = combine_outer.permute(2, 0, 3, 1).sum(dim=-1)
        importance = 0.5 * ((importance > 0.5).float() + (importance > 0.).float())

        dispatch_inner, combine_inner, loss_inner = self.gate_inner(expert_inputs_outer, importance=importance)
        expert_inputs = torch.einsum('ebnd,ebnfc->efbcd', expert_inputs_outer, dispatch_inner)

        orig_shape = expert_inputs.shape
        expert_outputs = self.experts(expert_inputs.reshape(eo, ei, -1, d)).reshape(*orig_shape)

        expert_outputs_outer = torch.einsum('efbcd,ebnfc->ebnd', expert_outputs, combine_inner)
        output = torch.einsum('ebcd,bnec->bnd', expert_outputs_outer, combine_outer)
        return output, (loss_outer + loss_inner) * self.loss_coef


def main():
    torch.manual_seed(0)
    moe = HeirarchicalMoE(dim=16, num_experts=(2, 2), hidden_dim=32)
    head = nn.Linear(16, 1)
    optimizer = torch.optim.Adam(list(moe.parameters()) + list(head.parameters()), lr=1e-3)
    for step in range(3):
        inputs = torch.randn(2, 16, 16)
        target = torch.randn(2, 16, 1)
        out, aux_loss = moe(inputs)
        loss = F.mse_loss(head(out), target) + aux_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("loss %.4f" % loss.item())


if __name__ == "__main__":
    main()
