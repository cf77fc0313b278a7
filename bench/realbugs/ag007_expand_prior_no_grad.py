# source: https://github.com/pytorch/pytorch/issues/25932
# symptom: AssertionError: the expanded prior must not require grad
# A Pyro maintainer's report: x.expand(1) inside torch.no_grad() still requires grad (`assert not y.requires_grad` fails).
# Re-created as the distribution-style use: a learned loc expanded under no_grad to build a fixed prior batch.
import torch


class LearnedNormal:
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    def frozen_batch(self, batch_shape):
        """A copy of the current distribution over a batch, meant to stay fixed while loc keeps training."""
        with torch.no_grad():
            loc = self.loc.expand(batch_shape)  # expect: AG007
            scale = self.scale.expand(batch_shape)  # expect: AG007
        return torch.distributions.Normal(loc, scale, validate_args=False)


x = torch.tensor(0.0, requires_grad=True)
s = torch.tensor(1.0, requires_grad=True)
prior = LearnedNormal(x, s).frozen_batch((4,))
print("prior.loc.requires_grad:", prior.loc.requires_grad)
assert not prior.loc.requires_grad, "the expanded prior must not require grad"
