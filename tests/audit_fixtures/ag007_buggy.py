import torch

w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.5)
with torch.no_grad():
    start = w[:]  # audit-expect: AG007
for step in range(3):
    opt.zero_grad()
    (w ** 2).sum().backward()
    opt.step()
print("moved by", sum(abs(a - b) for a, b in zip(w.tolist(), start.tolist())))
