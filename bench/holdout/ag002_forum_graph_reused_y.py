# source: https://discuss.pytorch.org/t/backpropagation-graph-is-reused-while-it-shouldnt/24554
# symptom: Trying to backward through the graph a second time
# The poster computes y = t @ a once, before the loop, from two tensors that require grad, and uses y in every
# iteration's forward (x_out = t @ (x + y)); the second iteration's backward runs into y's freed sub-graph.
import torch

measure = torch.nn.MSELoss()

x = torch.tensor([1, 0], dtype=torch.float64)
t = torch.eye(2, dtype=torch.float64, requires_grad=True)
a = torch.ones(2, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.SGD([t, a], lr=0.01)
y = t @ a  # expect: AG002

for __ in range(2):
    optimizer.zero_grad()
    x_out = t @ (x + y)  # Raises `RuntimeError` later on.
    loss = measure(x_out, x)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
