# source: https://github.com/pytorch/pytorch/issues/46609
# symptom: c\.requires_grad: True.*c still shares b's memory
# The report: b = a.clone(); with torch.no_grad(): c = b.expand((1,)) leaves c.requires_grad == True. The user expected
# a no_grad result to be a new, untracked tensor; it is an alias of b. Re-created with that check and its consequence.
import torch

a = torch.tensor(1.0, requires_grad=True)
b = a.clone()
with torch.no_grad():
    c = b.expand((1,))  # expect: AG007
print("c.requires_grad:", c.requires_grad)

with torch.no_grad():
    b.mul_(3.0)  # later edits of b ...
if c.item() == b.item():
    print("c still shares b's memory:", c.item())  # ... show up in the "constant" c
