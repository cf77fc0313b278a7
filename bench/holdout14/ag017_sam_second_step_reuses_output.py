"""SAM training loop: the second forward-backward pass reuses the first pass's output.

Sharpness-Aware Minimization needs two gradient evaluations per batch: one at `w` (then `first_step` moves the
weights to `w + e(w)`), and one at the perturbed weights (then `second_step` moves back and applies the base
optimizer). The reporter computed `output = model(images)` once and, after `optimizer.first_step(zero_grad=True)`,
called `criterion(output, target).backward()` on that same output. Its graph was freed by the first `backward()` (and
the weights it saved have since been moved in place), so the second backward fails on the first batch.
"""
# source: https://github.com/davda54/sam/issues/45
# symptom: Trying to backward through the graph a second time
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        assert rho >= 0.0, f"Invalid rho, should be non-negative: {rho}"
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
                e_w = p.grad * scale.to(p)
                p.add_(e_w)  # climb to the local maximum w + e(w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.sub_(self.state[p]["e_w"])  # back to w
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def step(self, closure=None):
        raise NotImplementedError("call first_step and second_step")

    def _grad_norm(self):
        return torch.norm(torch.stack([p.grad.norm(p=2) for group in self.param_groups for p in group["params"]
                                       if p.grad is not None]), p=2)


class SmallNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def accuracy(output, target):
    return (output.argmax(1) == target).float().mean().item()


def train(loader, model, criterion, optimizer, epoch):
    model.train()
    total_loss, total_acc = 0.0, 0.0
    for images, target in loader:
        output = model(images)
        # first forward-backward pass
        loss = criterion(output, target)
        loss.backward()
        optimizer.first_step(zero_grad=True)

        # second forward-backward pass
        criterion(output, target).backward()  # expect: AG017
        optimizer.second_step(zero_grad=True)

        total_loss += loss.item()
        total_acc += accuracy(output.detach(), target)
    print(f"epoch {epoch} loss {total_loss / len(loader):.4f} acc {total_acc / len(loader):.3f}")


def main():
    torch.manual_seed(0)
    images = torch.randn(64, 3, 32, 32)
    labels = torch.randint(0, 10, (64,))
    loader = [(images[i:i + 16], labels[i:i + 16]) for i in range(0, 64, 16)]
    model = SmallNet()
    optimizer = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.05, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        train(loader, model, criterion, optimizer, epoch)


if __name__ == "__main__":
    main()
