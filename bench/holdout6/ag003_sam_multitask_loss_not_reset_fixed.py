# source: https://github.com/davda54/sam/issues/10
# symptom: Trying to backward through the graph a second time
"""Twin (the fix the thread points to: start a fresh `loss = 0` for the second forward-backward pass). SAM (sharpness-aware minimisation) on a multi-task classifier, as posted in the thread: the first forward's
per-task losses are summed into `loss`, back-propagated, and `optimizer.first_step` moves to the perturbed
weights; the second forward's task losses are then added to the *same* `loss` variable, which still holds the
first graph, so the second `loss.backward()` runs through the freed first graph too."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        return torch.norm(torch.stack([p.grad.norm(p=2) for g in self.param_groups for p in g["params"]
                                       if p.grad is not None]), p=2)


class MultiTaskNet(nn.Module):
    """A small CNN with one logit per finding (the thread's chest X-ray setting), plus a logit map."""

    def __init__(self, num_tasks=3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.heads = nn.Conv2d(8, num_tasks, 1)

    def forward(self, x):
        logit_map = self.heads(self.features(x))
        return logit_map.mean(dim=(2, 3)), logit_map


def get_loss(output, target, index, device, cfg):
    logits, labels = output[:, index], target[:, index]
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    acc = ((logits > 0).float() == labels).float().mean()
    return loss, acc


def train_epoch(model, optimizer, loader, num_tasks, device="cpu", cfg=None):
    loss_sum = [0.0] * num_tasks
    acc_sum = [0.0] * num_tasks
    for step, (image, target) in enumerate(loader):
        output, logit_map = model(image)
        loss = 0
        for t in range(num_tasks):
            loss_t, acc_t = get_loss(output, target, t, device, cfg)
            loss += loss_t
            loss_sum[t] += loss_t.item()
            acc_sum[t] += acc_t.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.first_step(zero_grad=True)

        output, logit_map = model(image)
        loss = 0
        for t in range(num_tasks):
            loss_t, acc_t = get_loss(output, target, t, device, cfg)
            loss += loss_t
            loss_sum[t] += loss_t.item()
            acc_sum[t] += acc_t.item()
        loss.backward()
        optimizer.second_step(zero_grad=True)
        print(f"step {step} loss {loss.item():.4f}")
    return loss_sum, acc_sum


num_tasks = 3
model = MultiTaskNet(num_tasks)
optimizer = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1, momentum=0.9)
loader = [(torch.rand(4, 1, 12, 12), (torch.rand(4, num_tasks) > 0.5).float()) for _ in range(2)]
train_epoch(model, optimizer, loader, num_tasks)
