# source: holdout11 short program (no report)
# symptom: backward through the graph a second time
"""Low-rank adapter fine-tuning: the update A @ B is composed inside the step function, once per step."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)

d_in, d_out, rank = 16, 4, 2
W0 = torch.randn(d_out, d_in) * 0.1           # frozen pretrained weight
b0 = torch.zeros(d_out)
A = torch.nn.Parameter(torch.randn(d_out, rank) * 0.01)
B = torch.nn.Parameter(torch.zeros(rank, d_in))
opt = torch.optim.Adam([A, B], lr=1e-2)

X = torch.randn(64, d_in)
y = torch.randint(0, d_out, (64,))



def step(xb, yb):
    delta = A @ B
    logits = F.linear(xb, W0 + delta, b0)
    loss = F.cross_entropy(logits, yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


for epoch in range(3):
    for i in range(0, 64, 16):
        l = step(X[i:i + 16], y[i:i + 16])
    print(f"epoch {epoch} loss {l:.4f}")
