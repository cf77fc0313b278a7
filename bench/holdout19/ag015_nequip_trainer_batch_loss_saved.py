# source: https://github.com/mir-group/nequip/pull/1
# symptom: train_loss keeps the graph of every batch: True
"""nequip `Trainer`: `batch_step` saves the batch loss and its per-key contributions on the trainer
(`self.batch_loss = loss`, `self.batch_loss_contrib = loss_contrib`), and `end_of_batch_log` appends them
to the epoch statistics (`stat[name][VALUE_KEY] += [value]`) for every batch, graph and all, so each epoch
holds on to the autograd graph of every batch. The pull request "Detach all losses that get saved" runs the
bookkeeping under `torch.no_grad()` and stores `.detach()`ed tensors.

Written for this set: a per-atom MLP summed per structure stands in for the NequIP network, random
"structures" with energies stand in for the data set, and only the loss statistics are kept.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

TRAIN, VALIDATION = "training", "validation"
LOSS_KEY, VALUE_KEY, CONTRIB = "loss", "value", "contrib"


class PerAtomEnergy(nn.Module):
    def __init__(self, n_species=3, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(n_species, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden + 3, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, data):
        h = torch.cat([self.embed(data["species"]), data["pos"]], dim=-1)
        atomic = self.mlp(h).squeeze(-1)
        energy = torch.zeros(data["n_structures"]).index_add(0, data["batch"], atomic)
        return {"total_energy": energy}


class Loss:
    def __init__(self, coeffs):
        self.coeffs = coeffs

    def __call__(self, pred, ref):
        contrib = {}
        loss = 0.0
        for key, coeff in self.coeffs.items():
            mse = torch.mean((pred[key] - ref[key]) ** 2)
            contrib[key] = {key: mse}
            loss = loss + coeff * mse
        return loss, contrib


class Trainer:
    def __init__(self, model, lr=1e-3, max_epochs=3):
        self.model = model
        self.loss = Loss({"total_energy": 1.0})
        self.optim = torch.optim.Adam(model.parameters(), lr=lr)
        self.max_epochs = max_epochs
        self.statistics = {}
        self.iepoch = 0
        self.ibatch = 0

    def batch_step(self, data, validation=False):
        self.model.train()
        out = self.model(data)
        loss, loss_contrib = self.loss(pred=out, ref=data)
        if not validation:
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
        self.batch_loss = loss  # expect: AG015
        self.batch_loss_contrib = loss_contrib
        self.end_of_batch_log(validation)

    def end_of_batch_log(self, validation):
        category = VALIDATION if validation else TRAIN
        if self.ibatch == 0:
            stat = {LOSS_KEY: {VALUE_KEY: [], CONTRIB: {}}}
            for key in self.batch_loss_contrib:
                stat[LOSS_KEY][CONTRIB][key] = []
            self.statistics[category] = stat
        else:
            stat = self.statistics[category]
        stat[LOSS_KEY][VALUE_KEY] += [self.batch_loss]  # expect: AG015
        for key, d in self.batch_loss_contrib.items():
            stat[LOSS_KEY][CONTRIB][key] += [d[key]]

    def end_of_epoch_log(self):
        values = self.statistics[TRAIN][LOSS_KEY][VALUE_KEY]
        mean = torch.stack([torch.as_tensor(v) for v in values]).mean()
        print(f"epoch {self.iepoch + 1}: train loss {float(mean):.4f}")
        return values

    def train(self, train_batches):
        kept = False
        for self.iepoch in range(self.max_epochs):
            for self.ibatch, data in enumerate(train_batches):
                self.batch_step(data)
            values = self.end_of_epoch_log()
            kept = kept or all(getattr(v, "grad_fn", None) is not None for v in values)
        print(f"train_loss keeps the graph of every batch: {kept}")


def make_batch(n_structures=4, atoms=5):
    n = n_structures * atoms
    return {
        "species": torch.randint(0, 3, (n,)),
        "pos": torch.randn(n, 3),
        "batch": torch.arange(n_structures).repeat_interleave(atoms),
        "n_structures": n_structures,
        "total_energy": torch.randn(n_structures),
    }


def main():
    batches = [make_batch() for _ in range(6)]
    trainer = Trainer(PerAtomEnergy())
    trainer.train(batches)


if __name__ == "__main__":
    main()
