# source: https://github.com/sktime/pytorch-forecasting/pull/1924
# symptom: training_step_outputs keeps the graph of every batch: True
"""pytorch-forecasting `BaseModel.training_step`: `log, out = self.step(x, y, batch_idx)` returns the loss
with its graph in `log`, and `self.training_step_outputs.append(log)` keeps every batch's log until
`on_train_epoch_end` clears the list, so the whole epoch's graphs stay alive (memory grows through the
epoch, issues #1369 and #1461). Written for this set with the BaseModel structure (step / training_step /
on_train_epoch_end / on_epoch_end, a loss metric object) and a minimal Lightning-like fit loop standing in
for the Trainer; random autoregressive series, a small MLP forecaster."""
import torch
import torch.nn as nn


class MAE(nn.Module):
    def forward(self, y_pred, target):
        return (y_pred - target).abs().mean()


class BaseModel(nn.Module):
    def __init__(self, loss=None, learning_rate=1e-3):
        super().__init__()
        self.loss = loss if loss is not None else MAE()
        self.learning_rate = learning_rate
        self.training_step_outputs = []
        self.graph_kept = []

    def step(self, x, y, batch_idx):
        out = self(x)
        prediction = out["prediction"]
        loss = self.loss(prediction, y)
        log = {"loss": loss, "n_samples": x["encoder_cont"].size(0)}
        return log, out

    def training_step(self, batch, batch_idx):
        x, y = batch
        log, out = self.step(x, y, batch_idx)
        self.training_step_outputs.append(log)  # expect: AG015
        return log

    def on_epoch_end(self, outputs):
        self.graph_kept.append(all(o["loss"].grad_fn is not None for o in outputs))
        total = sum(float(o["loss"]) * o["n_samples"] for o in outputs)
        return total / sum(o["n_samples"] for o in outputs)

    def on_train_epoch_end(self):
        mean_loss = self.on_epoch_end(self.training_step_outputs)
        self.training_step_outputs.clear()
        return mean_loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)


class MLPForecaster(BaseModel):
    def __init__(self, max_encoder_length=20, max_prediction_length=5, hidden_size=32, **kwargs):
        super().__init__(**kwargs)
        self.net = nn.Sequential(nn.Linear(max_encoder_length, hidden_size), nn.ReLU(),
                                 nn.Linear(hidden_size, max_prediction_length))

    def forward(self, x):
        return {"prediction": self.net(x["encoder_cont"].squeeze(-1))}


def make_batches(n_batches=8, batch_size=16, enc=20, dec=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(enc + dec, dtype=torch.float32)
    for _ in range(n_batches):
        phase = torch.rand(batch_size, 1, generator=g) * 6.28
        series = torch.sin(t / 3.0 + phase) + 0.1 * torch.randn(batch_size, enc + dec, generator=g)
        x = {"encoder_cont": series[:, :enc, None]}
        yield x, series[:, enc:]


def fit(model, max_epochs=3):
    optimizer = model.configure_optimizers()
    for epoch in range(max_epochs):
        model.train()
        for batch_idx, batch in enumerate(make_batches(seed=epoch)):
            optimizer.zero_grad()
            log = model.training_step(batch, batch_idx)
            log["loss"].backward()
            optimizer.step()
        print("epoch", epoch, "train_loss", round(model.on_train_epoch_end(), 4))


def main():
    torch.manual_seed(0)
    model = MLPForecaster(learning_rate=3e-3)
    fit(model)
    print("training_step_outputs keeps the graph of every batch:", all(model.graph_kept))


if __name__ == "__main__":
    main()
