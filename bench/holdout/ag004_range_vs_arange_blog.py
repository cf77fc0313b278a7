# source: http://mynw.cn/operation/1424.html
# symptom: torch.range is deprecated.*Only Tensors of floating point and complex dtype can require gradients
# The post compares torch.range(-8, 8) (float32, end inclusive) with torch.arange(-8, 8) (int64) and shows that
# asking the integer arange for gradients fails ("在梯度设置时会出现错误").
import torch

x = torch.range(-8, 8, 1, requires_grad=True)  # expect: AG011
y = torch.arange(-8, 8, 1, requires_grad=True)  # expect: AG004
print(x, x.dtype)
print(y, y.dtype)
