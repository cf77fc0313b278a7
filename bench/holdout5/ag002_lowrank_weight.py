# source: written for bench/holdout5 (short training program, low-rank factorised linear map, notebook style)
# symptom: backward through the graph a second time|modified by an inplace operation
import torch
import torch.nn.functional as F

torch.manual_seed(2)

n_in, n_out, rank = 8, 6, 2
U = torch.randn(n_out, rank, requires_grad=True)
V = torch.randn(rank, n_in, requires_grad=True)
optimizer = torch.optim.Adam([U, V], lr=0.01)

# a rank-2 target map and some inputs
target = torch.randn(n_out, rank) @ torch.randn(rank, n_in)
X = torch.randn(32, n_in)
Y = X @ target.T

# the effective weight of the layer
W = U @ V  # expect: AG002

for step in range(50):
    optimizer.zero_grad()
    pred = X @ W.T
    loss = F.mse_loss(pred, Y)
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f}")

with torch.no_grad():
    err = (U @ V - target).norm() / target.norm()
print(f"relative error of the factorisation: {err.item():.3f}")
