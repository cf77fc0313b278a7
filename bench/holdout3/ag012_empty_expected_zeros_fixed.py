# source: https://github.com/pytorch/pytorch/issues/24263
# symptom: x is all zeros: False
# Clean twin: torch.zeros(5, 3), as the maintainer answered.
import torch

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True

x = torch.zeros(5, 3)
print(x)
print("x is all zeros:", bool((x == 0).all()))
