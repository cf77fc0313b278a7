# source: https://github.com/pytorch/pytorch/issues/101934
# symptom: weights used by forward follow new_weights after optimizer.step\(\): False
"""LayerWithConcatInConstructor: a layer that extends the previous task's weight rows with a new trainable
row concatenates them once, in __init__ (register_buffer('full_weights', torch.cat([previous_weights,
self.new_weights]))), and forward uses that buffer. The concatenation is built once from the Parameter:
gradients still reach new_weights through the stored graph (on the reporter's GPU the gradient even
stayed on the CPU after model.to(device)), but the buffer the forward uses never sees the updates.

Written for bench/holdout8 with the structure of the report (LayerWithConcatInConstructor and the
forward-pass variant), used as the growing head of a small incremental classifier trained for a few SGD
steps on random features.
"""
import torch
from torch import nn


class LayerWithConcatInConstructor(nn.Module):
    def __init__(self, previous_weights: torch.Tensor):
        super().__init__()
        self.new_weights = nn.parameter.Parameter(torch.randn(1, previous_weights.shape[-1], dtype=previous_weights.dtype))
        self.register_buffer("full_weights", torch.cat([previous_weights, self.new_weights], dim=0))  # expect: AG002

    def weights(self):
        return self.full_weights

    def forward(self, x):
        return x @ self.weights().t()


class IncrementalClassifier(nn.Module):
    def __init__(self, in_features, previous_head_weights):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_features, 10), nn.ReLU())
        self.head = LayerWithConcatInConstructor(previous_head_weights)

    def forward(self, x):
        return self.head(self.backbone(x))


def train_new_task(model, steps=5):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    new_class = model.head.weights().shape[0] - 1
    for step in range(steps):
        x = torch.randn(16, 8)
        y = torch.full((16,), new_class)
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


def main():
    torch.manual_seed(0)
    prev_weights = torch.randn(2, 10)
    model = IncrementalClassifier(8, prev_weights)
    train_new_task(model)
    used = model.head.weights()[-1]
    print("weights used by forward follow new_weights after optimizer.step():",
          torch.equal(used.detach(), model.head.new_weights.detach()[0]))


if __name__ == "__main__":
    main()
