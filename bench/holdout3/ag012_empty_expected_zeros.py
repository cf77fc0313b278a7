# source: https://github.com/pytorch/pytorch/issues/24263
# symptom: x is all zeros: False
# "torch.empty() seems to produce random values": the user expected torch.empty(5, 3) to give zeros (as the blitz
# tutorial's printed output suggested) and reads it; "That's intended. Use torch.zeros() if you want zeros."
# Fresh memory is made to read NaN (torch.utils.deterministic) so the run is repeatable.
import torch

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True

x = torch.empty(5, 3)  # expect: AG012
print(x)
print("x is all zeros:", bool((x == 0).all()))
