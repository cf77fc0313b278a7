# source: https://github.com/kevinzakka/pytorch-goodies/issues/8
# symptom: loss: nan
# The orthogonal-regularisation recipe starts its accumulator as Variable(torch.FloatTensor(1), requires_grad=True):
# uninitialised memory that every step adds the penalty terms to and then adds to the training loss.
# (fill_uninitialized_memory makes the garbage deterministic: fresh memory reads NaN.)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
reg = 1e-6

for step in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    orth_loss = Variable(torch.FloatTensor(1), requires_grad=True)  # expect: AG012
    for name, param in model.named_parameters():
        if 'bias' not in name:
            param_flat = param.view(param.shape[0], -1)
            sym = torch.mm(param_flat, torch.t(param_flat))
            sym -= torch.eye(param_flat.shape[0])
            orth_loss = orth_loss + (reg * sym.abs().sum())
    loss = loss + orth_loss
    loss.backward()
    optimizer.step()
    print(f"step {step} loss: {loss.item():.4f}")
