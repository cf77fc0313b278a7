# source: https://github.com/neuraloperator/neuraloperator/pull/291
# symptom: grad can be implicitly created only for scalar outputs
# Clean twin: LpLoss also reduces over the channel dim (reduce_dims=[0, 1]), as the maintainers answered,
# so the loss is one number.
import torch
import torch.nn as nn


class LpLoss:
    def __init__(self, d=1, p=2, reduce_dims=0, reductions="sum"):
        self.d = d
        self.p = p
        self.reduce_dims = [reduce_dims] if isinstance(reduce_dims, int) else reduce_dims
        self.reductions = [reductions] * len(self.reduce_dims) if isinstance(reductions, str) else reductions

    def reduce_all(self, x):
        for j, dim in enumerate(self.reduce_dims):
            x = torch.sum(x, dim=dim, keepdim=True) if self.reductions[j] == "sum" else torch.mean(x, dim=dim, keepdim=True)
        return x.squeeze(0)

    def rel(self, x, y):
        diff = torch.norm(torch.flatten(x, start_dim=-self.d) - torch.flatten(y, start_dim=-self.d), p=self.p, dim=-1)
        ynorm = torch.norm(torch.flatten(y, start_dim=-self.d), p=self.p, dim=-1)
        return self.reduce_all(diff / ynorm)

    def __call__(self, y_pred, y, **kwargs):
        return self.rel(y_pred, y)


class FNOBlockNet(nn.Module):
    def __init__(self, in_channels=1, out_channels=3, width=8):
        super().__init__()
        self.lift = nn.Conv2d(in_channels, width, 1)
        self.mix = nn.Conv2d(width, width, 3, padding=1)
        self.project = nn.Conv2d(width, out_channels, 1)

    def forward(self, x):
        return self.project(torch.nn.functional.gelu(self.mix(self.lift(x))))


class Trainer:
    def __init__(self, model, n_epochs=1):
        self.model = model
        self.n_epochs = n_epochs

    def train(self, train_loader, optimizer, training_loss):
        for epoch in range(self.n_epochs):
            self.model.train()
            for idx, sample in enumerate(train_loader):
                optimizer.zero_grad(set_to_none=True)
                out = self.model(sample["x"])
                loss = training_loss(out, sample["y"])
                loss.backward()
                optimizer.step()
            print(f"epoch {epoch}: loss {loss.sum().item():.4f}")


torch.manual_seed(0)
model = FNOBlockNet()
loader = [{"x": torch.randn(2, 1, 8, 8), "y": torch.randn(2, 3, 8, 8)} for _ in range(2)]
Trainer(model).train(loader, torch.optim.Adam(model.parameters(), lr=1e-3), LpLoss(d=2, p=2, reduce_dims=[0, 1]))
