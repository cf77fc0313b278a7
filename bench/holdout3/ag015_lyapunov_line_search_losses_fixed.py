# source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
# symptom: stored losses still have a graph: True
# Clean twin: the list stores the float value of each loss, the PR's fix.
import torch
import torch.nn as nn


class LyapunovHybridSystem:
    def __init__(self, relu):
        self.relu = relu

    def lyapunov_value(self, x, x_equilibrium):
        return self.relu(x).squeeze(-1) - self.relu(x_equilibrium).squeeze(-1) + 0.1 * (x - x_equilibrium).abs().sum(-1)

    def lyapunov_derivative_loss(self, x, x_next, x_equilibrium):
        dV = self.lyapunov_value(x_next, x_equilibrium) - self.lyapunov_value(x, x_equilibrium)
        return torch.relu(dV + 0.01 * self.lyapunov_value(x, x_equilibrium)).mean()


class TrainLyapunovReLU:
    def __init__(self, lyapunov_hybrid_system, max_iterations=4):
        self.lyapunov_hybrid_system = lyapunov_hybrid_system
        self.max_iterations = max_iterations
        self.A = torch.tensor([[0.9, 0.2], [-0.1, 0.8]])

    def total_loss(self, state_samples):
        x_next = state_samples @ self.A.T
        return self.lyapunov_hybrid_system.lyapunov_derivative_loss(state_samples, x_next, torch.zeros(2))

    def train(self, state_samples):
        params = list(self.lyapunov_hybrid_system.relu.parameters())
        optimizer = torch.optim.LBFGS(params, lr=0.5, max_iter=2, line_search_fn="strong_wolfe")
        losses = []
        for iter_count in range(self.max_iterations):
            def closure():
                optimizer.zero_grad()
                loss = self.total_loss(state_samples)
                loss.backward()
                return loss
            loss = optimizer.step(closure)
            losses.append(loss.item())
        return losses


torch.manual_seed(0)
relu = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
dut = TrainLyapunovReLU(LyapunovHybridSystem(relu))
losses = dut.train(torch.randn(16, 2))
print("stored losses still have a graph:", any(isinstance(loss, torch.Tensor) and loss.grad_fn is not None for loss in losses))
