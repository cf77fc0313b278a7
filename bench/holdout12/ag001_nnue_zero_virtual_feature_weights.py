# source: https://github.com/official-stockfish/nnue-pytorch/pull/75
# symptom: leaf Variable that requires grad is being used in an in-place operation
"""nnue-pytorch `NNUE._zero_virtual_feature_weights()` (called from `__init__`): the weights of the
factorised (virtual) input features start at zero, written as `weights[:, a:b] = 0.0` into
`self.input.weight` outside `torch.no_grad()`. The weight is a leaf that requires grad, so building the
model fails with newer PyTorch ("some versions of pytorch disallow this in-place operation with grad")."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureSet:
    """HalfKP-like feature set with a block of virtual (factorised) features at the end."""

    def __init__(self, num_real=48, num_virtual=16):
        self.num_real_features = num_real
        self.num_virtual_features = num_virtual
        self.num_features = num_real + num_virtual

    def get_virtual_feature_ranges(self):
        return [(self.num_real_features, self.num_features)]


class NNUE(nn.Module):
    def __init__(self, feature_set, L1=32, L2=8, L3=8, lambda_=1.0):
        super().__init__()
        self.input = nn.Linear(feature_set.num_features, L1)
        self.feature_set = feature_set
        self.l1 = nn.Linear(2 * L1, L2)
        self.l2 = nn.Linear(L2, L3)
        self.output = nn.Linear(L3, 1)
        self.lambda_ = lambda_
        self._zero_virtual_feature_weights()

    def _zero_virtual_feature_weights(self):
        weights = self.input.weight
        for a, b in self.feature_set.get_virtual_feature_ranges():
            weights[:, a:b] = 0.0  # expect: AG001
        self.input.weight = nn.Parameter(weights)

    def forward(self, us, them, white, black):
        w = self.input(white)
        b = self.input(black)
        l0_ = (us * torch.cat([w, b], dim=1)) + (them * torch.cat([b, w], dim=1))
        l0_ = torch.clamp(l0_, 0.0, 1.0)
        l1_ = torch.clamp(self.l1(l0_), 0.0, 1.0)
        l2_ = torch.clamp(self.l2(l1_), 0.0, 1.0)
        return self.output(l2_)

    def step(self, batch, optimizer):
        us, them, white, black, outcome, score = batch
        q = self(us, them, white, black)
        t = outcome
        p = torch.sigmoid(score / 600.0)
        target = self.lambda_ * p + (1.0 - self.lambda_) * t
        loss = F.mse_loss(torch.sigmoid(q), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()


def main():
    feature_set = FeatureSet()
    model = NNUE(feature_set)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for step in range(3):
        n = 16
        us = torch.randint(0, 2, (n, 1)).float()
        batch = (us, 1 - us, (torch.rand(n, feature_set.num_features) < 0.1).float(),
                 (torch.rand(n, feature_set.num_features) < 0.1).float(),
                 torch.rand(n, 1), torch.randn(n, 1) * 300)
        print(f"step {step}: loss {model.step(batch, optimizer):.5f}")


if __name__ == "__main__":
    main()
