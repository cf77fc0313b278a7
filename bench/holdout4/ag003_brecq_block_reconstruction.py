# source: https://github.com/yhhhli/BRECQ/issues/12
# symptom: graph kept after backward: True
# BRECQ's block_reconstruction optimises the AdaRound rounding variables of one block: every iteration runs the block
# on a fresh calibration mini-batch, builds the loss and calls err.backward(retain_graph=True) before the optimizer
# step; nothing backpropagates through that graph again ("What is the purpose for setting retain_graph=True?").
import torch
import torch.nn as nn
import torch.nn.functional as F


def saved_tensors_alive(t):
    """Walk t's graph; True when some node still holds a readable saved tensor (backward freed nothing)."""
    pending, visited = [t.grad_fn], set()
    while pending:
        node = pending.pop()
        if node is None or node in visited:
            continue
        visited.add(node)
        for attr in dir(node):
            if not attr.startswith("_saved_"):
                continue
            try:
                value = getattr(node, attr)
            except RuntimeError:
                return False
            if isinstance(value, torch.Tensor):
                return True
        pending.extend(next_node for next_node, _ in node.next_functions)
    return False


class AdaRoundQuantizer(nn.Module):
    def __init__(self, weight_tensor, n_bits=4, gamma=-0.1, zeta=1.1):
        super().__init__()
        self.delta = (weight_tensor.max() - weight_tensor.min()) / (2 ** n_bits - 1)
        self.gamma, self.zeta = gamma, zeta
        rest = (weight_tensor / self.delta) - torch.floor(weight_tensor / self.delta)
        alpha = -torch.log((self.zeta - self.gamma) / (rest - self.gamma) - 1)
        self.alpha = nn.Parameter(alpha)

    def get_soft_targets(self):
        return torch.clamp(torch.sigmoid(self.alpha) * (self.zeta - self.gamma) + self.gamma, 0, 1)

    def forward(self, x):
        x_floor = torch.floor(x / self.delta)
        return (x_floor + self.get_soft_targets()) * self.delta


class QuantModule(nn.Module):
    def __init__(self, org_module):
        super().__init__()
        self.org_weight = org_module.weight.data.clone()
        self.bias = org_module.bias.data.clone()
        self.weight_quantizer = AdaRoundQuantizer(self.org_weight)

    def forward(self, x):
        return F.linear(x, self.weight_quantizer(self.org_weight), self.bias)


class QuantBlock(nn.Module):
    def __init__(self, fp_block):
        super().__init__()
        self.fc1 = QuantModule(fp_block[0])
        self.fc2 = QuantModule(fp_block[2])

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class LossFunction:
    def __init__(self, block, weight=0.01, b=20.0):
        self.block, self.weight, self.b = block, weight, b

    def __call__(self, pred, tgt):
        rec_loss = (pred - tgt).pow(2).sum(1).mean()
        round_loss = 0
        for module in self.block.modules():
            if isinstance(module, QuantModule):
                round_vals = module.weight_quantizer.get_soft_targets()
                round_loss += self.weight * (1 - ((round_vals - 0.5).abs() * 2).pow(self.b)).sum()
        return rec_loss + round_loss


def block_reconstruction(block, cached_inps, cached_outs, batch_size=8, iters=5):
    opt_params = [m.weight_quantizer.alpha for m in block.modules() if isinstance(m, QuantModule)]
    optimizer = torch.optim.Adam(opt_params)
    loss_func = LossFunction(block)
    for i in range(iters):
        idx = torch.randperm(cached_inps.size(0))[:batch_size]
        cur_inp, cur_out = cached_inps[idx], cached_outs[idx]
        optimizer.zero_grad()
        out_quant = block(cur_inp)
        err = loss_func(out_quant, cur_out)
        err.backward(retain_graph=True)  # expect: AG003
        optimizer.step()
    print(f"final reconstruction loss {err.item():.4f}")
    print("graph kept after backward:", saved_tensors_alive(err))


torch.manual_seed(0)
fp_block = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))
cali_data = torch.randn(32, 6)
with torch.no_grad():
    cached_outs = fp_block(cali_data)
block_reconstruction(QuantBlock(fp_block), cali_data, cached_outs)
