# source: https://discuss.pytorch.org/t/backpropagation-graph-is-reused-while-it-shouldnt/24554
# symptom: Trying to backward through the graph a second time
# Clean twin: the answer's fix, y = t @ a recomputed inside the loop each iteration.
import torch

measure = torch.nn.MSELoss()

x = torch.tensor([1, 0], dtype=torch.float64)
t = torch.eye(2, dtype=torch.float64, requires_grad=True)
a = torch.ones(2, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.SGD([t, a], lr=0.01)

for __ in range(2):
    optimizer.zero_grad()
    y = t @ a
    x_out = t @ (x + y)
    loss = measure(x_out, x)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
