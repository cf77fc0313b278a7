# source: https://github.com/snap-stanford/GEARS/issues/86
# symptom: direction loss term gives zero gradient: True
"""GEARS (perturbation-response prediction) loss_fct: the "direction loss" compares
torch.sign(y_p - ctrl) with torch.sign(pred_p - ctrl). The sign of the prediction has a zero derivative
everywhere, so the term adds to the loss but never to the gradient (the authors agree it is an error and
suggest tanh).

Written for bench/holdout8 with the structure of GEARS (a model mapping the control expression and the
perturbation to the perturbed expression, loss_fct with the autofocus MSE and the direction term over the
perturbations of the batch, a train loop with Adam); the gene graph networks are small linear layers and
the expression data are random.

Twin: the fix the authors give in the thread: tanh of the prediction instead of its sign.
"""
import torch
import torch.nn as nn


class GEARS_Model(nn.Module):
    def __init__(self, num_genes, num_perts, hidden_size=16):
        super().__init__()
        self.gene_emb = nn.Linear(num_genes, hidden_size)
        self.pert_emb = nn.Embedding(num_perts, hidden_size)
        self.recovery = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, num_genes))

    def forward(self, ctrl_expr, pert_idx):
        h = self.gene_emb(ctrl_expr) + self.pert_emb(pert_idx)
        return ctrl_expr + self.recovery(h)


def loss_fct(pred, y, perts, ctrl=None, direction_lambda=1e-3, dict_filter=None):
    gamma = 2
    losses = torch.tensor(0.0, requires_grad=True)
    for p in sorted(set(perts)):
        pert_idx = torch.tensor([i for i, q in enumerate(perts) if q == p])
        if p != "ctrl":
            retain_idx = dict_filter[p]
            pred_p = pred[pert_idx][:, retain_idx]
            y_p = y[pert_idx][:, retain_idx]
            ctrl_p = ctrl[retain_idx]
        else:
            pred_p = pred[pert_idx]
            y_p = y[pert_idx]
            ctrl_p = ctrl
        losses = losses + torch.sum((pred_p - y_p) ** (2 + gamma)) / pred_p.shape[0] / pred_p.shape[1]
        losses = losses + direction_loss(pred_p, y_p, ctrl_p, direction_lambda)
    return losses / len(set(perts))


def direction_loss(pred_p, y_p, ctrl_p, direction_lambda):
    diff = torch.sign(y_p - ctrl_p) - torch.tanh(pred_p - ctrl_p)
    return torch.sum(direction_lambda * diff ** 2) / pred_p.shape[0] / pred_p.shape[1]


class GEARS:
    def __init__(self, num_genes=12, pert_names=("ctrl", "A", "B", "C")):
        self.pert_names = list(pert_names)
        self.model = GEARS_Model(num_genes, len(self.pert_names))
        self.ctrl_expression = torch.rand(num_genes)
        self.dict_filter = {p: torch.arange(0, num_genes - i) for i, p in enumerate(self.pert_names)}

    def make_batch(self, batch_size=8):
        perts = [self.pert_names[i % len(self.pert_names)] for i in range(batch_size)]
        pert_idx = torch.tensor([self.pert_names.index(p) for p in perts])
        x = self.ctrl_expression.expand(batch_size, -1) + 0.05 * torch.randn(batch_size, len(self.ctrl_expression))
        y = x + 0.3 * torch.randn_like(x)
        return x, pert_idx, y, perts

    def train(self, epochs=3, lr=1e-3):
        optimizer = torch.optim.Adam(self.model.parameters(), lr=lr, weight_decay=5e-4)
        for epoch in range(epochs):
            self.model.train()
            x, pert_idx, y, perts = self.make_batch()
            optimizer.zero_grad()
            pred = self.model(x, pert_idx)
            loss = loss_fct(pred, y, perts, ctrl=self.ctrl_expression, dict_filter=self.dict_filter)
            loss.backward()
            nn.utils.clip_grad_value_(self.model.parameters(), clip_value=1.0)
            optimizer.step()
            print(f"Epoch {epoch + 1}: train loss {loss.item():.4f}")

    def direction_term_gradient_is_zero(self):
        x, pert_idx, y, perts = self.make_batch()
        pred = self.model(x, pert_idx)
        term = direction_loss(pred, y, self.ctrl_expression, direction_lambda=1.0)
        grads = torch.autograd.grad(term, list(self.model.parameters()), allow_unused=True)
        return all(g is None or bool((g == 0).all()) for g in grads)


def main():
    torch.manual_seed(0)
    gears = GEARS()
    gears.train()
    print("direction loss term gives zero gradient:", gears.direction_term_gradient_is_zero())


if __name__ == "__main__":
    main()
