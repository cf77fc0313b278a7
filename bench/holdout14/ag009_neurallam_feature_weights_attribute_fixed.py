"""neural-lam's ARModel with the feature weights registered as a buffer (clean twin).

The state statistics are registered with `register_buffer`, but `self.feature_weights = torch.tensor(
state_feature_weights, dtype=torch.float32)` is a plain attribute: `model.to(device)` (Lightning's move to the GPU)
leaves it behind, so the weighted loss mixes devices. Here the move is `.to(torch.float64)` on the CPU: the buffers
and parameters follow it, the feature weights stay float32 on whatever device they were made on.

Clean twin: the pull request's change, `self.register_buffer("feature_weights", torch.tensor(state_feature_weights,
dtype=torch.float32))` (a buffer, so it moves with the model and is in the state_dict).
"""
# source: https://github.com/mllam/neural-lam/pull/241
# symptom: feature_weights left behind by \.to\(\): True
import torch
import torch.nn as nn


def get_state_feature_weighting(num_state_vars):
    return [1.0 + 0.5 * i for i in range(num_state_vars)]


class ARModel(nn.Module):
    def __init__(self, num_grid_nodes=10, num_state_vars=3, hidden=16):
        super().__init__()
        self.num_state_vars = num_state_vars
        state_stats = {
            "state_mean": torch.zeros(num_state_vars),
            "state_std": torch.ones(num_state_vars),
            "diff_mean": torch.zeros(num_state_vars),
            "diff_std": 0.5 * torch.ones(num_state_vars),
        }
        for key, val in state_stats.items():
            self.register_buffer(key, val, persistent=False)
        state_feature_weights = get_state_feature_weighting(num_state_vars)
        self.register_buffer("feature_weights", torch.tensor(state_feature_weights, dtype=torch.float32))
        self.predictor = nn.Sequential(
            nn.Linear(2 * num_state_vars, hidden), nn.SiLU(), nn.Linear(hidden, num_state_vars)
        )

    def predict_step(self, prev_state, prev_prev_state):
        delta = self.predictor(torch.cat([prev_state, prev_prev_state], dim=-1))
        return prev_state + delta * self.diff_std + self.diff_mean

    def unroll_prediction(self, init_states, pred_steps):
        prev_prev_state, prev_state = init_states[:, 0], init_states[:, 1]
        preds = []
        for _ in range(pred_steps):
            pred_state = self.predict_step(prev_state, prev_prev_state)
            preds.append(pred_state)
            prev_prev_state, prev_state = prev_state, pred_state
        return torch.stack(preds, dim=1)

    def weighted_mse(self, pred, target):
        per_var_std = self.diff_std / torch.sqrt(self.feature_weights)
        return (((pred - target) / per_var_std) ** 2).mean()

    def training_step(self, batch):
        init_states, target_states = batch
        prediction = self.unroll_prediction(init_states, target_states.shape[1])
        return self.weighted_mse(prediction, target_states)


def main():
    torch.manual_seed(0)
    model = ARModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(5):
        batch = (torch.randn(4, 2, 10, 3), torch.randn(4, 3, 10, 3))
        loss = model.training_step(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")
    model = model.to(torch.float64)
    left_behind = model.feature_weights.dtype != model.diff_std.dtype
    print(f"feature_weights left behind by .to(): {left_behind}")


if __name__ == "__main__":
    main()
