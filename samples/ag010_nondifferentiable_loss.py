"""AG010 (seed 002): training on the error rate, which goes through argmax and a comparison.
Observed in torch 2.13: RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(32, 4)
labels = (x[:, 0] > 0).long()
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    optimizer.zero_grad()
    logits = model(x)
    predicted = logits.argmax(dim=1)
    loss = (predicted != labels).float().mean()
    loss.backward()  # expect: AG010
    optimizer.step()
    print(step, loss.item())
