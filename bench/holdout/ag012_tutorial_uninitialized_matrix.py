# source: https://github.com/pytorch/tutorials/issues/41
# symptom: x \* y: tensor\(\[\[nan
# The blitz tutorial's y = torch.Tensor(5, 3) is "an uninitialized matrix"; multiplying it with data gives
# garbage (inf in the report). soumith: "If you want zeroed Tensors, use torch.zeros".
# (fill_uninitialized_memory makes the garbage deterministic: fresh memory reads NaN.)
from __future__ import print_function

import torch

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True

x = torch.rand(5, 3)
y = torch.Tensor(5, 3)  # expect: AG012
print("x * y:", x * y)
