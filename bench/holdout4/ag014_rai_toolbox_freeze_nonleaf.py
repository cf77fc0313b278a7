# source: https://github.com/mit-ll-responsible-ai/responsible-ai-toolbox/issues/24
# symptom: you can only change requires_grad flags of leaf variables
# rai_toolbox's `freeze(*items)` records each parameter's requires_grad and sets it to False, returning a function
# that restores the old states. A perturbation loop freezes the model and the data it perturbs; when the data is
# itself computed from a tensor that requires grad (here: the previous round's adversarial batch), freeze calls
# requires_grad_(False) on a non-leaf tensor and raises.
import torch
import torch.nn as nn
import torch.nn.functional as F


def freeze(*items):
    param_states = {}
    for item in items:
        params = item.parameters() if isinstance(item, nn.Module) else [item]
        for param in params:
            if param not in param_states:
                # a parameter met twice keeps the state from its first encounter
                param_states[param] = param.requires_grad
                param.requires_grad_(False)  # expect: AG014

    def restore_state():
        for p, requires_grad in param_states.items():
            p.requires_grad_(requires_grad)

    return restore_state


class AdditivePerturbation(nn.Module):
    def __init__(self, data_shape):
        super().__init__()
        self.delta = nn.Parameter(torch.zeros(data_shape))

    def forward(self, data):
        return data + self.delta


def gradient_ascent(model, data, target, steps=3, step_size=0.1, epsilon=0.3):
    perturber = AdditivePerturbation(data.shape)
    optimizer = torch.optim.SGD(perturber.parameters(), lr=step_size)
    restore = freeze(model, data)
    try:
        for _ in range(steps):
            loss = -F.cross_entropy(model(perturber(data)), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                perturber.delta.clamp_(-epsilon, epsilon)
    finally:
        restore()
    return perturber(data), loss


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
data = torch.randn(8, 6)
target = torch.randint(0, 3, (8,))
for round_ in range(2):
    data, loss = gradient_ascent(model, data, target)
    print(f"round {round_} adversarial loss {-loss.item():.4f}")
