# source: https://github.com/pyro-ppl/pyro/commit/9aea8620189d97b01e1abedee598051d481078b2
# symptom: reloaded flow gives the same log_prob: False
"""pyro `AutoRegressiveNN` (MADE) inside an affine autoregressive flow, trained, checkpointed and reloaded.

`AutoRegressiveNN.__init__` keeps its random variable order as a plain tensor attribute,
`self.permutation = torch.randperm(input_dim)`. The masks built from it are buffers and go into the
`state_dict()`, the permutation does not: a flow rebuilt and loaded from the checkpoint has the trained masks but
a fresh permutation, and its sequential inverse (used by `log_prob`) runs in the wrong order.
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(3)


def sample_mask_indices(input_dim, hidden_dim):
    return torch.round(torch.linspace(1, input_dim, steps=hidden_dim))


def create_mask(input_dim, hidden_dims, permutation, output_dim_multiplier):
    var_index = torch.zeros(permutation.shape)
    var_index[permutation] = torch.arange(input_dim, dtype=torch.get_default_dtype())
    input_indices = 1 + var_index
    hidden_indices = [sample_mask_indices(input_dim - 1, h) for h in hidden_dims]
    output_indices = (var_index + 1).repeat(output_dim_multiplier)
    masks = [(hidden_indices[0].unsqueeze(-1) >= input_indices.unsqueeze(0)).type_as(var_index)]
    for i in range(1, len(hidden_dims)):
        masks.append((hidden_indices[i].unsqueeze(-1) >= hidden_indices[i - 1].unsqueeze(0)).type_as(var_index))
    masks.append((output_indices.unsqueeze(-1) > hidden_indices[-1].unsqueeze(0)).type_as(var_index))
    return masks


class MaskedLinear(nn.Linear):
    def __init__(self, in_features, out_features, mask, bias=True):
        super().__init__(in_features, out_features, bias)
        self.register_buffer('mask', mask.data)

    def forward(self, _input):
        return nn.functional.linear(_input, self.mask * self.weight, self.bias)


class AutoRegressiveNN(nn.Module):
    def __init__(self, input_dim, hidden_dims, param_dims=(1, 1), permutation=None):
        super().__init__()
        self.input_dim = input_dim
        self.param_dims = list(param_dims)
        self.output_multiplier = sum(self.param_dims)
        if permutation is None:
            # By default set a random permutation of variables
            self.permutation = torch.randperm(input_dim, device='cpu')  # expect: AG009
        else:
            self.permutation = permutation.type(dtype=torch.int64)
        self.masks = create_mask(input_dim, hidden_dims, self.permutation, self.output_multiplier)
        layers = [MaskedLinear(input_dim, hidden_dims[0], self.masks[0])]
        for i in range(1, len(hidden_dims)):
            layers.append(MaskedLinear(hidden_dims[i - 1], hidden_dims[i], self.masks[i]))
        layers.append(MaskedLinear(hidden_dims[-1], input_dim * self.output_multiplier, self.masks[-1]))
        self.layers = nn.ModuleList(layers)
        self.f = nn.ReLU()

    def get_permutation(self):
        return self.permutation

    def forward(self, x):
        h = x
        for layer in self.layers[:-1]:
            h = self.f(layer(h))
        h = self.layers[-1](h)
        h = h.reshape(list(x.size()[:-1]) + [self.output_multiplier, self.input_dim])
        return h[..., 0, :], h[..., 1, :]


class AffineAutoregressive(nn.Module):
    """y = mean(x) + exp(log_scale(x)) * x; the inverse is sequential, in the ARN's variable order."""
    def __init__(self, arn):
        super().__init__()
        self.arn = arn

    def inverse(self, y):
        x = torch.zeros_like(y)
        log_scales = torch.zeros_like(y)
        for idx in self.arn.get_permutation().tolist():
            mean, log_scale = self.arn(x)
            log_scale = log_scale.clamp(-5, 3)
            x = x.clone()
            x[..., idx] = (y[..., idx] - mean[..., idx]) * torch.exp(-log_scale[..., idx])
            log_scales[..., idx] = log_scale[..., idx]
        return x, log_scales

    def log_prob(self, y):
        x, log_scales = self.inverse(y)
        base = -0.5 * (x ** 2).sum(-1) - 0.5 * x.size(-1) * math.log(2 * math.pi)
        return base - log_scales.sum(-1)


def build_flow(dim=4):
    return AffineAutoregressive(AutoRegressiveNN(dim, [32, 32]))


data = torch.randn(256, 4) @ torch.tensor([[1.0, 0.5, 0.0, 0.0], [0.0, 1.0, 0.3, 0.0],
                                          [0.0, 0.0, 1.0, 0.8], [0.0, 0.0, 0.0, 0.5]])
flow = build_flow()
optimizer = torch.optim.Adam(flow.parameters(), lr=3e-3)
for step in range(60):
    batch = data[torch.randint(0, 256, (64,))]
    loss = -flow.log_prob(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(f"step {step} nll {loss.item():.3f}")

checkpoint = flow.state_dict()
print("permutation in state_dict:", any('permutation' in k for k in checkpoint))
restored = build_flow()
restored.load_state_dict(checkpoint)
with torch.no_grad():
    same = torch.allclose(flow.log_prob(data[:32]), restored.log_prob(data[:32]), atol=1e-5)
print("reloaded flow gives the same log_prob:", same)
