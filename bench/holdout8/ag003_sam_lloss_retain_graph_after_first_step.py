# source: https://github.com/kozistr/pytorch_optimizer/issues/64
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Active learning with Learning Loss (LLOSS) and the SAM optimizer: train_epoch computes the loss once,
then calls loss.backward(retain_graph=True), optimizers['backbone'].first_step() (which moves the
weights in place to the adversarial point), and loss.backward(retain_graph=True) again on the same graph
instead of a fresh forward (the re-computed criterion(...) result is thrown away). The second backward
meets the changed classifier weight.

Written for bench/holdout8 with the structure of the reporter's train_epoch (models dict with the
backbone and the loss-prediction module, per-sample CrossEntropyLoss, LossPredLoss) and a SAM optimizer
with first_step / second_step as in the library; the ResNet-18 is a small conv net with four feature
taps and the CIFAR-100 images are random 16x16 tensors.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

WEIGHT = 1.0
MARGIN = 1.0
EPOCHL = 1


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(p=2) for group in self.param_groups
                                            for p in group["params"] if p.grad is not None]), p=2)
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
                if p.grad is None or "e_w" not in self.state[p]:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def step(self, closure=None):
        raise RuntimeError("[-] Sharpness Aware Minimization (SAM) requires closure")


class ResNet(nn.Module):
    def __init__(self, num_classes=100):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Conv2d(8, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer3 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.linear = nn.Linear(16, num_classes)

    def forward(self, x):
        out1 = self.layer1(x)
        out2 = self.layer2(out1)
        out3 = self.layer3(out2)
        out4 = self.layer4(out3)
        out = F.adaptive_avg_pool2d(out4, 1).flatten(1)
        return self.linear(out), out, [out1, out2, out3, out4]


class LossNet(nn.Module):
    def __init__(self, num_channels=(8, 8, 16, 16), interm_dim=8):
        super().__init__()
        self.FCs = nn.ModuleList([nn.Linear(c, interm_dim) for c in num_channels])
        self.linear = nn.Linear(4 * interm_dim, 1)

    def forward(self, features):
        outs = [F.relu(fc(F.adaptive_avg_pool2d(f, 1).flatten(1))) for fc, f in zip(self.FCs, features)]
        return self.linear(torch.cat(outs, 1))


def LossPredLoss(input, target, margin=1.0):
    input = (input - input.flip(0))[:len(input) // 2]
    target = (target - target.flip(0))[:len(target) // 2].detach()
    one = 2 * torch.sign(torch.clamp(target, min=0)) - 1
    return torch.sum(torch.clamp(margin - one * input, min=0)) / input.size(0)


def train_epoch(models, method, criterion, optimizers, dataloaders, epoch, epoch_loss):
    models["backbone"].train()
    models["module"].train()
    for inputs, labels in dataloaders["train"]:
        optimizers["module"].zero_grad()
        scores, _, features = models["backbone"](inputs)
        target_loss = criterion(scores, labels)
        if method == "lloss":
            if epoch > epoch_loss:
                features = [f.detach() for f in features]
            pred_loss = models["module"](features).view(-1)
            m_module_loss = LossPredLoss(pred_loss, target_loss, margin=MARGIN)
            m_backbone_loss = torch.sum(target_loss) / target_loss.size(0)
            loss = m_backbone_loss + WEIGHT * m_module_loss
        else:
            loss = torch.sum(target_loss) / target_loss.size(0)

        # -----------------SAM Optimizer -------------------
        criterion(models["backbone"](inputs)[0], labels)
        loss.backward(retain_graph=True)  # expect: AG003
        optimizers["backbone"].first_step(zero_grad=True)

        criterion(models["backbone"](inputs)[0], labels)
        loss.backward(retain_graph=True)  # expect: AG003
        optimizers["backbone"].second_step(zero_grad=True)

        if method == "lloss":
            optimizers["module"].step()
    return loss.item()


def main():
    torch.manual_seed(0)
    resnet18 = ResNet(num_classes=100)
    loss_module = LossNet()
    models = {"backbone": resnet18, "module": loss_module}
    criterion = nn.CrossEntropyLoss(reduction="none")
    optim_backbone = SAM(models["backbone"].parameters(), torch.optim.SGD, lr=0.1, momentum=0.9, weight_decay=5e-4)
    optim_module = torch.optim.SGD(models["module"].parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    optimizers = {"backbone": optim_backbone, "module": optim_module}
    dataloaders = {"train": [(torch.rand(8, 3, 16, 16), torch.randint(0, 100, (8,))) for _ in range(3)]}
    for epoch in range(2):
        loss = train_epoch(models, "lloss", criterion, optimizers, dataloaders, epoch, EPOCHL)
        print(f"epoch {epoch} loss {loss:.4f}")


if __name__ == "__main__":
    main()
