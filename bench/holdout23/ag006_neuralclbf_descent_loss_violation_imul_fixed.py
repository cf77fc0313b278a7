# source: https://github.com/MIT-REALM/neural_clbf/pull/12
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""MIT-REALM/neural_clbf after pull request #12: descent_loss masks the relu output out of place,
`violation = violation * condition_active`, and accumulates the descent terms and the total loss with
out-of-place adds, so the relu outputs saved for backward are left intact."""
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class LinearControlAffine:
    """xdot = A x + B u, two states, one control, a few parameter scenarios."""
    n_dims = 2
    n_controls = 1
    dt = 0.01

    def __init__(self):
        self.A = torch.tensor([[0.0, 1.0], [1.0, -0.2]])
        self.B = torch.tensor([[0.0], [1.0]])

    def control_affine_dynamics(self, x, params):
        f = x @ (self.A * params["m"]).T
        g = self.B.expand(x.shape[0], -1, -1)
        return f, g

    def closed_loop_dynamics(self, x, u, params):
        f, g = self.control_affine_dynamics(x, params)
        return f + torch.bmm(g, u.unsqueeze(-1)).squeeze(-1)


class NeuralCLBFController(nn.Module):
    def __init__(self, dynamics_model, scenarios, clf_lambda=1.0, safe_level=1.0,
                 controller_period=0.05, barrier=True):
        super().__init__()
        self.dynamics_model = dynamics_model
        self.scenarios = scenarios
        self.n_scenarios = len(scenarios)
        self.clf_lambda = clf_lambda
        self.safe_level = safe_level
        self.controller_period = controller_period
        self.barrier = barrier
        self.V_nn = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.K = nn.Linear(2, 1, bias=False)

    def V_with_jacobian(self, x):
        x = x.detach().requires_grad_(True)
        h = self.V_nn(x)
        V = 0.5 * (h * h).sum(dim=1)
        JV = torch.autograd.grad(V.sum(), x, create_graph=True)[0]
        return V, JV

    def V(self, x):
        h = self.V_nn(x)
        return 0.5 * (h * h).sum(dim=1)

    def V_lie_derivatives(self, x):
        _, gradV = self.V_with_jacobian(x)
        Lf, Lg = [], []
        for s in self.scenarios:
            f, g = self.dynamics_model.control_affine_dynamics(x, s)
            Lf.append((gradV * f).sum(dim=1, keepdim=True))
            Lg.append(torch.bmm(gradV.unsqueeze(1), g).squeeze(1))
        return torch.stack(Lf, dim=1), torch.stack(Lg, dim=1)

    def solve_CLF_QP(self, x, requires_grad=False):
        u = -self.K(x)
        relaxation = F.relu(u.abs() - 5.0).expand(-1, self.n_scenarios)
        return u, relaxation

    def boundary_loss(self, x, goal_mask, safe_mask, unsafe_mask) -> List[Tuple[str, torch.Tensor]]:
        V = self.V(x)
        eps = 1e-2
        safe_violation = F.relu(eps + V[safe_mask] - self.safe_level)
        unsafe_violation = F.relu(eps + self.safe_level - V[unsafe_mask])
        return [("CLBF safe region term", 100 * safe_violation.mean()),
                ("CLBF unsafe region term", 100 * unsafe_violation.mean())]

    def descent_loss(self, x, goal_mask, safe_mask, unsafe_mask,
                     accuracy=False, requires_grad=False) -> List[Tuple[str, torch.Tensor]]:
        loss = []
        eps = 0.1
        V = self.V(x)
        if self.barrier:
            condition_active = torch.sigmoid(10 * (self.safe_level + eps - V))
        else:
            condition_active = torch.tensor(1.0)

        u_qp, qp_relaxation = self.solve_CLF_QP(x, requires_grad=requires_grad)
        qp_relaxation = torch.mean(qp_relaxation, dim=-1)
        qp_relaxation_loss = (qp_relaxation * condition_active).mean()
        loss.append(("QP relaxation", qp_relaxation_loss))

        # decrease of V by linearization
        eps = 1.0
        clbf_descent_term_lin = torch.tensor(0.0).type_as(x)
        clbf_descent_acc_lin = torch.tensor(0.0).type_as(x)
        Lf_V, Lg_V = self.V_lie_derivatives(x)
        for i, s in enumerate(self.scenarios):
            Vdot = Lf_V[:, i, :].unsqueeze(1) + torch.bmm(
                Lg_V[:, i, :].unsqueeze(1),
                u_qp.reshape(-1, self.dynamics_model.n_controls, 1),
            )
            Vdot = Vdot.reshape(V.shape)
            violation = F.relu(eps + Vdot + self.clf_lambda * V)
            violation = violation * condition_active
            clbf_descent_term_lin = clbf_descent_term_lin + violation.mean()
            clbf_descent_acc_lin = clbf_descent_acc_lin + (violation <= eps).sum() / (
                violation.nelement() * self.n_scenarios
            )
        loss.append(("CLBF descent term (linearized)", clbf_descent_term_lin))
        if accuracy:
            loss.append(("CLBF descent accuracy (linearized)", clbf_descent_acc_lin))

        # decrease of V by simulation
        eps = 1.0
        clbf_descent_term_sim = torch.tensor(0.0).type_as(x)
        clbf_descent_acc_sim = torch.tensor(0.0).type_as(x)
        for s in self.scenarios:
            xdot = self.dynamics_model.closed_loop_dynamics(x, u_qp, params=s)
            x_next = x + self.dynamics_model.dt * xdot
            V_next = self.V(x_next)
            violation = F.relu(
                eps + (V_next - V) / self.controller_period + self.clf_lambda * V
            )
            violation = violation * condition_active

            clbf_descent_term_sim = clbf_descent_term_sim + violation.mean()
            clbf_descent_acc_sim = clbf_descent_acc_sim + (violation <= eps).sum() / (
                violation.nelement() * self.n_scenarios
            )
        loss.append(("CLBF descent term (simulated)", clbf_descent_term_sim))
        if accuracy:
            loss.append(("CLBF descent accuracy (simulated)", clbf_descent_acc_sim))
        return loss

    def training_step(self, x, goal_mask, safe_mask, unsafe_mask):
        component_losses = {}
        component_losses.update(self.boundary_loss(x, goal_mask, safe_mask, unsafe_mask))
        component_losses.update(
            self.descent_loss(x, goal_mask, safe_mask, unsafe_mask, requires_grad=True)
        )
        total_loss = torch.tensor(0.0).type_as(x)
        for _, loss_value in component_losses.items():
            if not torch.isnan(loss_value):
                total_loss = total_loss + loss_value
        return total_loss


def main():
    torch.manual_seed(0)
    scenarios = [{"m": 1.0}, {"m": 1.2}]
    controller = NeuralCLBFController(LinearControlAffine(), scenarios)
    optimizer = torch.optim.SGD(controller.parameters(), lr=1e-3)
    for step in range(3):
        x = 4 * torch.rand(64, 2) - 2
        r = x.norm(dim=1)
        goal_mask, safe_mask, unsafe_mask = r < 0.2, r < 1.0, r > 1.5
        optimizer.zero_grad()
        loss = controller.training_step(x, goal_mask, safe_mask, unsafe_mask)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
