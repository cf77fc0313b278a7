# source: holdout11 short program (no report)
# symptom: restored model matches: False
"""Regressor with an input normaliser whose running statistics are plain tensor attributes; a state_dict checkpoint round-trip loses them."""
import io
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunningNorm(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.running_mean = torch.zeros(dim)  # expect: AG009
        self.running_var = torch.ones(dim)  # expect: AG009

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.running_mean.lerp_(x.mean(0), self.momentum)
                self.running_var.lerp_(x.var(0), self.momentum)
        return (x - self.running_mean) / (self.running_var + 1e-5).sqrt()


def make_model():
    return nn.Sequential(RunningNorm(6), nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))


model = make_model()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(50):
    x = 5 + 3 * torch.randn(32, 6)
    y = x.sum(dim=1, keepdim=True)
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print(f"final loss {loss.item():.3f}")

buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
restored = make_model()
restored.load_state_dict(torch.load(buf))
model.eval()
restored.eval()
x_test = 5 + 3 * torch.randn(8, 6)
with torch.no_grad():
    print("restored model matches:", torch.allclose(model(x_test), restored(x_test)))
