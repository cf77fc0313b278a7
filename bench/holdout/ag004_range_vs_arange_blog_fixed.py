# source: http://mynw.cn/operation/1424.html
# symptom: torch.range is deprecated.*Only Tensors of floating point and complex dtype can require gradients
# Clean twin: float arguments give float tensors that may require grad; torch.arange replaces the
# deprecated torch.range with the same values (end + step).
import torch

x = torch.arange(-8.0, 9.0, 1.0, requires_grad=True)
y = torch.arange(-8.0, 8.0, 1.0, requires_grad=True)
print(x, x.dtype)
print(y, y.dtype)
