# source: https://github.com/neuraloperator/neuraloperator/issues/103
# symptom: grad can be implicitly created only for scalar outputs
"""neuraloperator: training an FNO on FDTD simulations split in time, 32 input and 32 output channels.

The reporter trains with the library's `H1Loss(d=2)` (reduce_dims=0 by default): it reduces over the batch
dimension only, so with one output channel the loss is a one-element tensor and training works, and with
32 channels it is a vector of 32 per-channel losses; `Trainer.train` calls `loss.backward()` on it. Written
for this set: a two-layer spectral-convolution network stands in for `FNO`, a few random fields stand in for
the simulations, and the channel count is cut to 4.

Fixed as the maintainer's answer on the reporter's pull request (#160) says: for the loss to be a scalar the
channel dimension must be among the reduced dimensions, `H1Loss(d=2, reduce_dims=[0, 1])`.
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class SpectralConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (in_channels * out_channels)
        self.weight = nn.Parameter(scale * torch.randn(in_channels, out_channels, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(x.size(0), self.weight.size(1), x.size(-2), x.size(-1) // 2 + 1,
                             dtype=torch.cfloat)
        m = self.modes
        out_ft[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m], self.weight)
        return torch.fft.irfft2(out_ft, s=x.shape[-2:])


class TinyFNO(nn.Module):
    def __init__(self, in_channels, out_channels, width=16, modes=4):
        super().__init__()
        self.lift = nn.Conv2d(in_channels, width, 1)
        self.spectral = nn.ModuleList([SpectralConv2d(width, width, modes) for _ in range(2)])
        self.skip = nn.ModuleList([nn.Conv2d(width, width, 1) for _ in range(2)])
        self.project = nn.Conv2d(width, out_channels, 1)

    def forward(self, x):
        x = self.lift(x)
        for spectral, skip in zip(self.spectral, self.skip):
            x = torch.nn.functional.gelu(spectral(x) + skip(x))
        return self.project(x)


class H1Loss:
    """Relative H1 loss over the last `d` dimensions, reduced over `reduce_dims` (the library's default: 0)."""

    def __init__(self, d=2, L=2 * math.pi, reduce_dims=0):
        self.d = d
        self.L = L
        self.reduce_dims = [reduce_dims] if isinstance(reduce_dims, int) else list(reduce_dims)

    def compute_terms(self, x, y):
        h = self.L / x.size(-1)
        terms_x, terms_y = [x], [y]
        for dim in range(-self.d, 0):
            terms_x.append((torch.roll(x, -1, dims=dim) - torch.roll(x, 1, dims=dim)) / (2 * h))
            terms_y.append((torch.roll(y, -1, dims=dim) - torch.roll(y, 1, dims=dim)) / (2 * h))
        return terms_x, terms_y

    def reduce_all(self, x):
        for j in self.reduce_dims:
            x = torch.sum(x, dim=j, keepdim=True)
        return x.squeeze()

    def rel(self, x, y):
        terms_x, terms_y = self.compute_terms(x, y)
        diff = sum(torch.flatten(a - b, start_dim=-self.d) ** 2 for a, b in zip(terms_x, terms_y)).sum(-1)
        ynorm = sum(torch.flatten(b, start_dim=-self.d) ** 2 for b in terms_y).sum(-1)
        return self.reduce_all(torch.sqrt(diff) / torch.sqrt(ynorm))

    def __call__(self, y_pred, y):
        return self.rel(y_pred, y)


class Trainer:
    def __init__(self, model, n_epochs):
        self.model = model
        self.n_epochs = n_epochs

    def train(self, train_loader, optimizer, scheduler, training_loss):
        for epoch in range(self.n_epochs):
            self.model.train()
            train_err = 0.0
            for x, y in train_loader:
                optimizer.zero_grad(set_to_none=True)
                out = self.model(x)
                loss = training_loss(out.float(), y)
                loss.backward()
                optimizer.step()
                train_err += loss.item()
            scheduler.step()
            print(f"[{epoch}] train_err={train_err / len(train_loader):.4f}")


def main():
    channels = 4
    x_train = torch.randn(16, channels, 16, 16)
    y_train = torch.roll(x_train, 1, dims=-1) * 0.5 + 0.1 * torch.randn(16, channels, 16, 16)
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train), batch_size=4)
    model = TinyFNO(in_channels=channels, out_channels=channels)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100, gamma=0.5)
    train_loss = H1Loss(d=2, reduce_dims=[0, 1])
    trainer = Trainer(model, n_epochs=2)
    trainer.train(train_loader, optimizer, scheduler, training_loss=train_loss)


if __name__ == "__main__":
    main()
