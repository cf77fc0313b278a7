# source: holdout11 short program (no report)
# symptom: grads match reference: False
"""Hand-written RNN cell unrolled over time: the hidden state is clipped out of place for the next step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ClippedRNN(nn.Module):
    def __init__(self, d_in=3, hidden=8, clip=0.5):
        super().__init__()
        self.Wx = nn.Linear(d_in, hidden)
        self.Wh = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Linear(hidden, 1)
        self.hidden, self.clip = hidden, clip

    def forward(self, x):
        h = torch.zeros(x.shape[0], self.hidden)
        outputs = []
        for t in range(x.shape[1]):
            h = torch.tanh(self.Wx(x[:, t]) + self.Wh(h))
            outputs.append(self.out(h))
            h = h.clamp(-self.clip, self.clip)
        return torch.cat(outputs, dim=1)

    def reference(self, x):
        h = torch.zeros(x.shape[0], self.hidden)
        outputs = []
        for t in range(x.shape[1]):
            h = torch.tanh(self.Wx(x[:, t]) + self.Wh(h))
            outputs.append(self.out(h))
            h = h.clamp(-self.clip, self.clip)
        return torch.cat(outputs, dim=1)


def grads_of(model, loss):
    model.zero_grad()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


model = ClippedRNN()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = 3 * torch.randn(8, 10, 3)
y = torch.randn(8, 10)

ref = grads_of(model, F.mse_loss(model.reference(x), y))
got = grads_of(model, F.mse_loss(model(x), y))
print("grads match reference:", all(torch.allclose(a, b) for a, b in zip(ref, got)))

for epoch in range(5):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
