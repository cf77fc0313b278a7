# source: https://github.com/pytorch/pytorch/issues/11390
# symptom: requires_grad inside no_grad: True.*A view was created in no_grad mode and its base .*has been modified inplace
# The report: x[1] taken inside torch.no_grad() still has requires_grad=True: no_grad made no copy, it is x's own row.
# Re-created where that bites: a no_grad "snapshot" of one row used as a fixed anchor while x trains; torch 2.13
# refuses the anchor once the optimizer has changed x in place.
import torch

torch.manual_seed(0)
x = torch.randn(3, 4, requires_grad=True)
with torch.no_grad():
    anchor = x[1]  # expect: AG007
print("requires_grad inside no_grad:", anchor.requires_grad)
start = anchor.tolist()

optimizer = torch.optim.SGD([x], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = ((x - anchor) ** 2).sum() + (x ** 2).sum()  # pull every row towards the (meant to be fixed) anchor
    loss.backward()
    optimizer.step()
if anchor.tolist() != start:
    print("anchor moved with x:", start[:2], "->", anchor.tolist()[:2])
