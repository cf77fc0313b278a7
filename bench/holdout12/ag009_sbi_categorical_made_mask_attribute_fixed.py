# source: https://github.com/sbi-dev/sbi/pull/1448
# symptom: not on the expected device|Expected all tensors to be on the same device
"""sbi `CategoricalMADE.__init__` builds `self.mask = torch.zeros(num_variables, num_categories)` (which
categories exist per variable) as a plain tensor attribute. `density_estimator.to(device)` moves the
MADE's parameters and its registered masks but not `self.mask`, so `compute_probs` multiplies tensors
on two devices (found by the GPU tests). No GPU here: the `meta` device stands in for CUDA, and the
estimator is moved there and evaluated (the loss), as the GPU training loop does first.

Fixed the way the review asks (instead of the pull request's own `to()` override): the mask is
registered as a buffer (after `super().__init__()`, which a buffer needs), so `.to(device)` moves it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskedLinear(nn.Linear):
    def __init__(self, in_features, out_features, mask):
        super().__init__(in_features, out_features)
        self.register_buffer("mask", mask)

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


class MADE(nn.Module):
    """A small autoregressive MADE (as nflows' MADE: its degree masks are buffers)."""

    def __init__(self, features, hidden_features, context_features, output_multiplier):
        super().__init__()
        in_deg = torch.arange(1, features + 1)
        hid_deg = torch.arange(hidden_features) % max(1, features - 1) + 1
        out_deg = in_deg.repeat_interleave(output_multiplier)
        self.first = MaskedLinear(features, hidden_features, (hid_deg[:, None] >= in_deg[None, :]).float())
        self.context = nn.Linear(context_features, hidden_features)
        self.last = MaskedLinear(hidden_features, features * output_multiplier,
                                 (out_deg[:, None] > hid_deg[None, :]).float())

    def forward(self, inputs, context=None):
        h = F.relu(self.first(inputs) + self.context(context))
        return self.last(h)


class CategoricalMADE(MADE):
    def __init__(self, num_categories, hidden_features, context_features):
        self.num_variables = len(num_categories)
        self.num_categories = int(torch.max(num_categories))
        super().__init__(self.num_variables, hidden_features, context_features,
                         output_multiplier=self.num_categories)
        mask = torch.zeros(self.num_variables, self.num_categories)
        for i, c in enumerate(num_categories):
            mask[i, :c] = 1
        self.register_buffer("mask", mask)
        self.embedding_net = nn.Identity()

    def forward(self, inputs, context=None):
        return super().forward(inputs, context=self.embedding_net(context))

    def compute_probs(self, outputs):
        ps = F.softmax(outputs, dim=-1) * self.mask
        return ps / ps.sum(dim=-1, keepdim=True)

    def log_prob(self, inputs, context=None):
        outputs = self.forward(inputs, context=context)
        outputs = outputs.reshape(*inputs.shape, self.num_categories)
        ps = self.compute_probs(outputs)
        log_prob = torch.log(ps.gather(-1, inputs.unsqueeze(-1).long()))
        return log_prob.squeeze(-1).sum(dim=-1)


def main():
    device = torch.device("meta")  # stands in for "cuda"
    num_categories = torch.tensor([3, 2, 4])
    estimator = CategoricalMADE(num_categories, hidden_features=16, context_features=2)
    theta = torch.randn(32, 2)
    x = torch.stack([torch.randint(0, int(c), (32,)) for c in num_categories], dim=1).float()

    # a CPU step first (works), then the same step on the device
    optimizer = torch.optim.Adam(estimator.parameters(), lr=1e-3)
    loss = -estimator.log_prob(x, theta).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"cpu loss {loss.item():.4f}")

    estimator.to(device)
    loss = -estimator.log_prob(x.to(device), theta.to(device)).mean()
    print(f"loss on {loss.device}: shape {tuple(loss.shape)}")


if __name__ == "__main__":
    main()
