# source: https://github.com/Unity-Technologies/ml-agents/pull/4292
# symptom: running statistics lost: restored normalizer has normalization_steps=1
# ml-agents' torch Normalizer.__init__ kept normalization_steps / running_mean / running_variance as plain tensors
# (the PR turns them into buffers). Re-created: the statistics a policy learned vanish when its checkpoint is reloaded.
import torch
import torch.nn as nn


class Normalizer(nn.Module):
    def __init__(self, vec_obs_size: int):
        super().__init__()
        self.normalization_steps = torch.tensor(1)  # expect: AG009
        self.running_mean = torch.zeros(vec_obs_size)  # expect: AG009
        self.running_variance = torch.ones(vec_obs_size)  # expect: AG009

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        normalized_state = torch.clamp(
            (inputs - self.running_mean) / torch.sqrt(self.running_variance / self.normalization_steps), -5, 5)
        return normalized_state

    def update(self, vector_input: torch.Tensor) -> None:
        steps_increment = vector_input.size()[0]
        total_new_steps = self.normalization_steps + steps_increment
        input_to_old_mean = vector_input - self.running_mean
        new_mean = self.running_mean + (input_to_old_mean / total_new_steps).sum(0)
        input_to_new_mean = vector_input - new_mean
        new_variance = self.running_variance + (input_to_new_mean * input_to_old_mean).sum(0)
        self.running_mean = new_mean
        self.running_variance = new_variance
        self.normalization_steps = total_new_steps


class VectorEncoder(nn.Module):
    def __init__(self, input_size, hidden_size, normalize=True):
        super().__init__()
        self.normalizer = Normalizer(input_size) if normalize else None
        self.seq_layers = nn.Sequential(nn.Linear(input_size, hidden_size), nn.SiLU())

    def forward(self, inputs):
        if self.normalizer is not None:
            inputs = self.normalizer(inputs)
        return self.seq_layers(inputs)


torch.manual_seed(0)
encoder = VectorEncoder(4, 16)
for _ in range(5):
    encoder.normalizer.update(torch.randn(32, 4) * 3 + 2)
checkpoint = encoder.state_dict()
restored = VectorEncoder(4, 16)
restored.load_state_dict(checkpoint)
print("checkpoint keys:", sorted(checkpoint))
steps = int(restored.normalizer.normalization_steps)
if steps != int(encoder.normalizer.normalization_steps):
    print(f"running statistics lost: restored normalizer has normalization_steps={steps}")
