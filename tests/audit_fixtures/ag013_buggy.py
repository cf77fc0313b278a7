import torch

pair = torch.tensor[[1.0, 2.0]]  # audit-expect: AG013
print(pair)
