# source: written for bench/holdout5 (short training program, sequence forecasting with an RNNCell unrolled by hand)
# symptom: loss nan
import torch
from torch import nn

torch.manual_seed(23)
torch.use_deterministic_algorithms(True)


class Forecaster(nn.Module):
    def __init__(self, hidden=20):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.RNNCell(1, hidden)
        self.out = nn.Linear(hidden, 1)

    def init_state(self, batch):
        return torch.empty(batch, self.hidden)  # expect: AG012

    def forward(self, seq):
        h = self.init_state(seq.shape[0])
        for t in range(seq.shape[1]):
            h = self.cell(seq[:, t], h)
        return self.out(h)


t = torch.linspace(0, 20, 400)
wave = torch.sin(t)
windows = torch.stack([wave[i:i + 11] for i in range(0, 380, 5)]).unsqueeze(-1)
inputs, targets = windows[:, :10], windows[:, 10]

model = Forecaster()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(10):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
