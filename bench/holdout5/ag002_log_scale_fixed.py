# source: written for bench/holdout5 (short training program, heteroscedastic regression with a learned noise scale, trainer class)
import torch
from torch import nn

torch.manual_seed(4)


class Trainer:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
        # parameterise the noise scale in log space so it stays positive
        self.log_sigma = nn.Parameter(torch.zeros(1))
        params = list(self.net.parameters()) + [self.log_sigma]
        self.optimizer = torch.optim.Adam(params, lr=1e-2)

    @staticmethod
    def nll(pred, y, sigma):
        return (((pred - y) / sigma) ** 2 / 2 + torch.log(sigma)).mean()

    def fit(self, x, y, max_steps=60):
        step = 0
        while step < max_steps:
            self.optimizer.zero_grad()
            sigma = self.log_sigma.exp()
            loss = self.nll(self.net(x), y, sigma)
            loss.backward()
            self.optimizer.step()
            step += 1
        return loss.item(), sigma.item()


x = torch.linspace(-2, 2, 100).unsqueeze(1)
y = torch.sin(2 * x) + 0.2 * torch.randn_like(x)
final_loss, noise = Trainer().fit(x, y)
print(f"loss {final_loss:.3f} sigma {noise:.3f}")
