# source: written for bench/holdout5 (short training program, fit a cubic on an evenly spaced grid with LBFGS)
import torch

torch.manual_seed(21)

xs = torch.arange(-1.0, 1.0 + 0.25, 0.25)
ys = 2 * xs ** 3 - xs + 0.05 * torch.randn_like(xs)

coef = torch.zeros(4, requires_grad=True)
opt = torch.optim.LBFGS([coef], lr=0.5, max_iter=20)
powers = torch.stack([xs ** k for k in range(4)], dim=1)


def closure():
    opt.zero_grad()
    loss = ((powers @ coef - ys) ** 2).mean()
    loss.backward()
    return loss


def report(loss):
    print("coefficients:", [round(c, 2) for c in coef.detach().tolist()])
    print("points:", len(xs), "loss:", round(loss.item(), 5))


for _ in range(5):
    loss = opt.step(closure)
report(loss)
print("prediction at 0.5:", round((torch.tensor([0.5 ** k for k in range(4)]) @ coef).item(), 3))
