# source: https://github.com/facebookresearch/ReAgent/commit/9e7d49eae6b8faf1587d764a3e39521ab37e081b
# symptom: reloaded LinUCB model gives the same scores: False
"""facebookresearch/ReAgent reagent/models/linear_regression.py before #629: LinearRegressionUCB
keeps its sufficient statistics as plain tensor attributes, `self.A = l2_reg_lambda *
torch.eye(...)`, `self.b = torch.zeros(...)`, `self.coefs`, `self.inv_A`, `self.coefs_valid_for_A`,
which the LinUCB trainer updates in place; they are not in the state_dict, so a checkpointed
and reloaded model has lost everything it learned (and `.to(device)` leaves them behind)."""
import io
from typing import Optional

import torch


def batch_quadratic_form(x: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """x^T A x for a batch of x: (B, N), A: (N, N) -> (B)"""
    return (torch.matmul(x, A) * x).sum(1)


class ModelBase(torch.nn.Module):
    def input_prototype(self):
        raise NotImplementedError


class LinearRegressionUCB(ModelBase):
    """Linear regression for LinUCB: A and b are updated explicitly by the trainer, and the
    coefficients are re-estimated lazily at inference."""

    def __init__(self, input_dim: int, *, l2_reg_lambda: float = 1.0, predict_ucb: float = False,
                 ucb_alpha: float = 1.0):
        super().__init__()
        self.input_dim = input_dim
        self.predict_ucb = predict_ucb
        self.ucb_alpha = ucb_alpha
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.A = l2_reg_lambda * torch.eye(self.input_dim, device=device)  # expect: AG009
        self.b = torch.zeros(self.input_dim, device=device)  # expect: AG009
        self.coefs = torch.zeros(self.input_dim, device=device)  # expect: AG009
        self.inv_A = torch.zeros(self.input_dim, self.input_dim, device=device)  # expect: AG009
        self.coefs_valid_for_A = -torch.ones_like(  # expect: AG009
            self.A, device=device
        )  # value of A matrix for which self.coefs were estimated

    def input_prototype(self) -> torch.Tensor:
        return torch.randn(1, self.input_dim)

    def _estimate_coefs(self):
        self.inv_A = torch.inverse(self.A)
        self.coefs = torch.matmul(self.inv_A, self.b)
        self.coefs_valid_for_A = self.A.clone()

    def forward(self, inp: torch.Tensor, ucb_alpha: Optional[float] = None) -> torch.Tensor:
        if ucb_alpha is None:
            ucb_alpha = self.ucb_alpha
        if not (self.coefs_valid_for_A == self.A).all():
            self._estimate_coefs()
        if self.predict_ucb:
            return torch.matmul(inp, self.coefs) + ucb_alpha * torch.sqrt(batch_quadratic_form(inp, self.inv_A))
        else:
            return torch.matmul(inp, self.coefs)


class LinUCBTrainer:
    """updates A and b with the LinUCB formulas (no optimizer)"""

    def __init__(self, policy_network):
        self.scorer = policy_network

    def update_params(self, x: torch.Tensor, y: torch.Tensor):
        self.scorer.A += torch.matmul(x.t(), x)
        self.scorer.b += torch.matmul(y, x)

    def train_step(self, batch):
        features, chosen_action_reward = batch
        self.update_params(features, chosen_action_reward.squeeze(-1))


def main():
    torch.manual_seed(0)
    input_dim = 4
    true_coefs = torch.tensor([0.5, -1.0, 2.0, 0.1])
    model = LinearRegressionUCB(input_dim, predict_ucb=True)
    trainer = LinUCBTrainer(model)
    for _ in range(10):
        x = torch.randn(16, input_dim)
        y = (x @ true_coefs + 0.1 * torch.randn(16))[:, None]
        trainer.train_step((x, y))
    test = torch.randn(5, input_dim)
    scores = model(test)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    reloaded = LinearRegressionUCB(input_dim, predict_ucb=True)
    reloaded.load_state_dict(torch.load(buf))
    print('scores', [round(v, 3) for v in scores.tolist()])
    print('reloaded LinUCB model gives the same scores:', torch.allclose(reloaded(test), scores))


if __name__ == '__main__':
    main()
