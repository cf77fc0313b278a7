# source: written for bench/holdout5 (short training program, MLP with a unit-norm output layer, notebook style)
import torch
from torch import nn

torch.manual_seed(15)

model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 1, bias=False))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
X = torch.randn(96, 6)
Y = torch.randn(96, 1)
first = model[0].weight
last = model[2].weight

for step in range(25):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    if step == 0:
        # sanity check of the first-layer gradient on the first step
        expected, = torch.autograd.grad(loss, first, retain_graph=True)
    loss.backward()
    if step == 0:
        print("grad check passed:", torch.allclose(first.grad, expected))
    opt.step()
    with torch.no_grad():
        last.div_(last.norm())
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.4f}")

with torch.no_grad():
    print("output-layer norm:", round(last.norm().item(), 4))
    print("final loss:", round(nn.functional.mse_loss(model(X), Y).item(), 4))
