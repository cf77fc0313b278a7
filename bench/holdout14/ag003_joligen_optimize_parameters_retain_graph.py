"""joliGEN: `BaseModel.optimize_parameters` backpropagates every group loss with `retain_graph=True`.

Each network group (generator, then discriminator) runs its forward and backward functions, then
`ll.backward(retain_graph=True)` for each of its losses and steps its optimizer. Nothing goes back through those graphs
again (the discriminator loss uses the detached fake), so every iteration keeps the saved tensors of both graphs alive
for nothing: a pure memory cost.
"""
# source: https://github.com/jolibrain/joliGEN/pull/281
# symptom: graph kept after backward: True
import torch
import torch.nn as nn


def saved_tensors_alive(loss):
    """True if every node of `loss`'s graph can still hand out what it saved (i.e. the graph was retained)."""
    stack, seen = [loss.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for name in dir(node):
            if name.startswith("_saved_"):
                try:
                    getattr(node, name)
                except RuntimeError:
                    return False
        stack.extend(fn for fn, _ in node.next_functions)
    return True


class NetworkGroup:
    def __init__(self, networks_to_optimize, forward_functions, backward_functions, loss_backward, optimizer):
        self.networks_to_optimize = networks_to_optimize
        self.forward_functions = forward_functions
        self.backward_functions = backward_functions
        self.loss_backward = loss_backward
        self.optimizer = optimizer


class Opt:
    train_iter_size = 1


class CutLikeModel:
    def __init__(self, opt):
        self.opt = opt
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))
        self.model_names = ["G", "D"]
        self.criterionGAN = nn.MSELoss()
        self.criterionIdt = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.networks_groups = [
            NetworkGroup(["G"], ["forward"], ["compute_G_loss"], ["loss_G_tot"], self.optimizer_G),
            NetworkGroup(["D"], [], ["compute_D_loss"], ["loss_D_tot"], self.optimizer_D),
        ]
        self.niter = 0
        self.retained = False

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def set_requires_grad(self, net, requires_grad):
        for p in net.parameters():
            p.requires_grad = requires_grad

    def forward(self):
        self.fake_B = self.netG(self.real_A)
        self.idt_B = self.netG(self.real_B)

    def compute_G_loss(self):
        pred_fake = self.netD(self.fake_B)
        self.loss_G_GAN = self.criterionGAN(pred_fake, torch.ones_like(pred_fake))
        self.loss_G_idt = self.criterionIdt(self.idt_B, self.real_B)
        self.loss_G_tot = self.loss_G_GAN + 10.0 * self.loss_G_idt

    def compute_D_loss(self):
        pred_fake = self.netD(self.fake_B.detach())
        pred_real = self.netD(self.real_B)
        self.loss_D_tot = 0.5 * (self.criterionGAN(pred_fake, torch.zeros_like(pred_fake))
                                 + self.criterionGAN(pred_real, torch.ones_like(pred_real)))

    def compute_step(self, optimizer):
        optimizer.step()
        optimizer.zero_grad()

    def optimize_parameters(self):
        self.niter = self.niter + 1
        for group in self.networks_groups:
            for network in self.model_names:
                self.set_requires_grad(getattr(self, "net" + network), network in group.networks_to_optimize)
            for forward in group.forward_functions:
                getattr(self, forward)()
            for backward in group.backward_functions:
                getattr(self, backward)()
            for loss in group.loss_backward:
                ll = getattr(self, loss) / self.opt.train_iter_size
                ll.backward(retain_graph=True)  # expect: AG003
                self.retained = self.retained or saved_tensors_alive(ll)
            self.compute_step(group.optimizer)


def main():
    torch.manual_seed(0)
    model = CutLikeModel(Opt())
    for it in range(4):
        model.set_input(torch.rand(2, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 16, 16) * 2 - 1)
        model.optimize_parameters()
        print(f"iter {it} G {model.loss_G_tot.item():.4f} D {model.loss_D_tot.item():.4f}")
    print(f"graph kept after backward: {model.retained}")


if __name__ == "__main__":
    main()
