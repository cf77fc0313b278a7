# source: https://github.com/pytorch/tutorials/issues/41
# symptom: x \* y: tensor\(\[\[nan
# Clean twin: soumith's advice, torch.zeros for a zeroed tensor.
# (fill_uninitialized_memory kept: it cannot change initialised tensors.)
from __future__ import print_function

import torch

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True

x = torch.rand(5, 3)
y = torch.zeros(5, 3)
print("x * y:", x * y)
