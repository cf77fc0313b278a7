"""AG011 fixed: torch.arange with the end moved one step further keeps the inclusive end point.
Observed in torch 2.13: runs clean, no warning; the same 5 values 0, 0.25, ..., 1."""
import torch

grid = torch.arange(0, 1 + 0.25, 0.25)
x = grid.clone().requires_grad_(True)
y = (x ** 3).sum()
y.backward()
slope = x.grad
print(grid, slope)
print("points:", grid.numel())
