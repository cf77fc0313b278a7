# source: https://github.com/graytowne/revisit_adv_rec/issues/3
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
"""revisit_adv_rec `trainers/wmf_trainer.py`, `WMFTrainer.train_als` (the "sur_wmf_als" surrogate): the
alternating-least-squares epoch solves each user's row in closed form and writes it back with
`model.P[user] = new_p_u.t()` (and `model.Q[item] = ...` for items), an in-place write into an
`nn.Parameter` outside `no_grad`, which recent PyTorch rejects. Written for this set with the trainer's
structure (WeightedMF with P/Q parameters, `_initialize`, `train_epoch` dispatching to `train_als`/`train_sgd`,
the confidence-weighted normal equations per row, an epoch loop with a recall check); the scipy sparse rows
are dense torch rows here and `Cu` is a `torch.diag`.

Fixed twin: the rows are written without autograd recording them. The fixing pull request (#4) writes
`model.P.data[user] = ...`; the twin writes the same rows under `torch.no_grad()`, which has the same effect."""
import torch
import torch.nn as nn
import torch.optim as optim


class Bunch(dict):
    __getattr__ = dict.__getitem__


class WeightedMF(nn.Module):
    def __init__(self, n_users, n_items, model_args):
        super().__init__()
        hidden_dims = model_args.hidden_dims
        if len(hidden_dims) > 1:
            raise ValueError("WMF can only have one latent dimension.")
        self.n_users, self.n_items, self.dim = n_users, n_items, hidden_dims[0]
        self.Q = nn.Parameter(torch.zeros([self.n_items, self.dim]).normal_(mean=0, std=0.1))
        self.P = nn.Parameter(torch.zeros([self.n_users, self.dim]).normal_(mean=0, std=0.1))

    def forward(self, user_id=None, item_id=None):
        if user_id is None and item_id is None:
            return torch.mm(self.P, self.Q.t())
        if user_id is not None:
            return torch.mm(self.P[[user_id]], self.Q.t())
        return torch.mm(self.P, self.Q[[item_id]].t())


class WMFTrainer:
    def __init__(self, n_users, n_items, args):
        self.args = args
        self.device = torch.device("cpu")
        self.n_users, self.n_items = n_users, n_items

    def _initialize(self):
        model_args = Bunch(self.args.model)
        self.net = WeightedMF(n_users=self.n_users, n_items=self.n_items, model_args=model_args).to(self.device)
        self.optimizer = optim.Adam(self.net.parameters(), lr=self.args.lr, weight_decay=self.args.l2)
        self.optim_method = model_args.optim_method
        self.weight_alpha = self.args.model["weight_alpha"]
        self.dim = self.net.dim

    def train_epoch(self, data):
        if self.optim_method == "sgd":
            return self.train_sgd(data)
        if self.optim_method == "als":
            return self.train_als(data)
        raise ValueError("Unknown optim_method {} for WMF.".format(self.optim_method))

    def train_als(self, data):
        model = self.net
        P = model.P.detach()
        Q = model.Q.detach()
        weight_alpha = self.weight_alpha - 1
        lamda_eye = torch.eye(self.dim) * self.args.l2
        # Update P
        residual = torch.mm(Q.t(), Q) + lamda_eye
        for user, x_row in enumerate(data):
            x_u = x_row[:, None]
            cu = x_row * weight_alpha + 1
            Cu, Cu_minusI = torch.diag(cu), torch.diag(cu - 1)
            lhs = torch.mm(Q.t(), Cu_minusI.mm(Q)) + residual
            rhs = torch.mm(Q.t(), Cu.mm(x_u))
            new_p_u = torch.mm(lhs.inverse(), rhs)
            with torch.no_grad():
                model.P[user] = new_p_u.t()
        # Update Q
        data = data.t()
        residual = torch.mm(P.t(), P) + lamda_eye
        for item, x_col in enumerate(data):
            x_v = x_col[:, None]
            cv = x_col * weight_alpha + 1
            Cv, Cv_minusI = torch.diag(cv), torch.diag(cv - 1)
            lhs = torch.mm(P.t(), Cv_minusI.mm(P)) + residual
            rhs = torch.mm(P.t(), Cv.mm(x_v))
            new_q_v = torch.mm(lhs.inverse(), rhs)
            with torch.no_grad():
                model.Q[item] = new_q_v.t()
        return 0

    def train_sgd(self, data):
        self.optimizer.zero_grad()
        preds = self.net()
        weights = 1 + (self.weight_alpha - 1) * data
        loss = (weights * (preds - data) ** 2).sum()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def recall_at_k(self, data, k=5):
        with torch.no_grad():
            scores = self.net() - 1e4 * data
            top = scores.topk(k, dim=1).indices
        held = self.heldout
        hits = held.gather(1, top).sum(1)
        return float((hits / held.sum(1).clamp(min=1)).mean())

    def fit(self, data, heldout, epochs=3):
        self._initialize()
        self.heldout = heldout
        for epoch in range(epochs):
            self.train_epoch(data)
            print("epoch", epoch, "recall@5", round(self.recall_at_k(data), 4))


def main():
    torch.manual_seed(0)
    n_users, n_items = 30, 20
    full = (torch.rand(n_users, n_items) < 0.25).float()
    heldout = full * (torch.rand(n_users, n_items) < 0.2).float()
    train = full - heldout
    args = Bunch(model={"hidden_dims": [8], "optim_method": "als", "weight_alpha": 20}, lr=1e-2, l2=1e-2)
    WMFTrainer(n_users, n_items, args).fit(train, heldout)


if __name__ == "__main__":
    main()
