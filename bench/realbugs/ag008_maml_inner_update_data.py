# source: https://github.com/KanishJebaMathewM/Truxify/issues/13118
# symptom: meta-model never trains: .* of \d+ meta-parameters got a gradient
# "MAML inner-loop `param.data -=` detaches the graph": inner_update adapts a clone with param.data -= inner_lr * grad,
# so the query loss has no path back to self.model and outer_update's meta_loss.backward() leaves every .grad None.
import logging
from typing import List, Tuple

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class MAMLModel(nn.Module):
    """Model-Agnostic Meta-Learning (MAML) network"""

    def __init__(self, input_dim: int = 8, hidden_dim: int = 32, output_dim: int = 1, num_layers: int = 2):
        super().__init__()
        self.input_dim, self.hidden_dim, self.output_dim, self.num_layers = input_dim, hidden_dim, output_dim, num_layers
        layers = [nn.Linear(input_dim, hidden_dim), nn.ReLU()]
        for _ in range(num_layers - 1):
            layers += [nn.Linear(hidden_dim, hidden_dim), nn.ReLU()]
        layers.append(nn.Linear(hidden_dim, output_dim))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)

    def clone(self) -> "MAMLModel":
        clone = MAMLModel(self.input_dim, self.hidden_dim, self.output_dim, self.num_layers)
        clone.load_state_dict(self.state_dict())
        return clone


class MAML:
    """Model-Agnostic Meta-Learning Algorithm"""

    def __init__(self, model: MAMLModel, inner_lr: float = 0.01, outer_lr: float = 0.001, device: str = "cpu"):
        self.model = model.to(device)
        self.inner_lr = inner_lr
        self.outer_optimizer = torch.optim.Adam(self.model.parameters(), lr=outer_lr)
        self.criterion = nn.MSELoss()

    def inner_update(self, model: MAMLModel, support_x: torch.Tensor, support_y: torch.Tensor) -> MAMLModel:
        adapted_model = model.clone()
        pred = adapted_model(support_x)
        loss = self.criterion(pred, support_y)
        grads = torch.autograd.grad(loss, adapted_model.parameters(), create_graph=True)
        for param, grad in zip(adapted_model.parameters(), grads):
            param.data -= self.inner_lr * grad  # expect: AG008
        return adapted_model

    def outer_update(self, meta_loss: torch.Tensor):
        self.outer_optimizer.zero_grad()
        meta_loss.backward()
        self.outer_optimizer.step()

    def meta_train_step(self, tasks: List[Tuple[torch.Tensor, ...]]) -> float:
        meta_loss = 0.0
        for support_x, support_y, query_x, query_y in tasks:
            adapted_model = self.inner_update(self.model, support_x, support_y)
            pred = adapted_model(query_x)
            meta_loss += self.criterion(pred, query_y)
        meta_loss = meta_loss / len(tasks)
        self.outer_update(meta_loss)
        return meta_loss.item()


class TaskGenerator:
    """Random linear regression tasks"""

    def __init__(self, num_tasks: int = 20, input_dim: int = 8):
        self.input_dim = input_dim
        self.tasks = [(torch.randn(input_dim, 1), torch.randn(1)) for _ in range(num_tasks)]

    def sample_task(self, k_shot: int = 5):
        w, b = self.tasks[torch.randint(len(self.tasks), (1,)).item()]
        support_x, query_x = torch.randn(k_shot, self.input_dim), torch.randn(10, self.input_dim)
        return support_x, support_x @ w + b, query_x, query_x @ w + b

    def sample_tasks(self, num_tasks: int, k_shot: int = 5):
        return [self.sample_task(k_shot) for _ in range(num_tasks)]


torch.manual_seed(0)
maml = MAML(MAMLModel())
generator = TaskGenerator()
before = [p.detach().clone() for p in maml.model.parameters()]
for epoch in range(3):
    print("epoch", epoch, "meta loss", maml.meta_train_step(generator.sample_tasks(4)))
with_grad = sum(p.grad is not None for p in maml.model.parameters())
moved = any(not torch.equal(b, p) for b, p in zip(before, maml.model.parameters()))
if with_grad == 0 and not moved:
    print(f"meta-model never trains: {with_grad} of {len(before)} meta-parameters got a gradient")
