"""AG011 (seed 003): torch.range includes its end point and is deprecated.
Observed in torch 2.13: runs, but emits UserWarning: torch.range is deprecated and will be removed in a future release ..."""
import torch

grid = torch.range(0, 1, 0.25)  # expect: AG011
x = grid.clone().requires_grad_(True)
y = (x ** 3).sum()
y.backward()
slope = x.grad
print(grid, slope)
print("points:", grid.numel())
