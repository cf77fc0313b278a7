# source: https://github.com/pyro-ppl/pyro/commit/2b5333b98a0b05e441eeae90a0550cc631c8c873
# symptom: posterior mean has NaN: True
"""pyro.distributions.summary NIGNormalRegressionSummary after the commit "Fixed torch empty bug": the
broadcasting tensors added to `features` and `obs` in update() and downdate() are torch.zeros(...).
Runs in the same deterministic mode as the bug program."""
import torch

torch.use_deterministic_algorithms(True)


class NIGNormalRegressionSummary(object):
    def __init__(self, prior_mean, prior_covariance, prior_shape, prior_rate):
        # Hack to allow scalar inputs
        self._mean = prior_mean + torch.Tensor([0.0])
        self._covariance = prior_covariance + torch.Tensor([[0.0]])
        self._shape = prior_shape + torch.Tensor([0.0])
        self._rate = prior_rate + torch.Tensor([0.0])
        assert torch.all(self._covariance.eq(self._covariance.transpose(-2, -1)))
        # Reparametrize
        self._precision = self._covariance.inverse()
        self._precision_times_mean = self._precision.matmul(self._mean.unsqueeze(-1)).squeeze(-1)
        self._reparametrized_rate = self._rate + (
            0.5 * (self._mean.unsqueeze(-2)).matmul(self._precision).matmul(self._mean.unsqueeze(-1)).squeeze(-1).squeeze(-1)
        )
        self.updated_canonical = True
        self.obs_dim = None

    def update(self, obs, features=None):
        assert features is not None
        assert obs.shape[-2] == features.shape[-2]
        if self.obs_dim is None:
            self.obs_dim = obs.shape[-1]
        # Hack to enforce that features and obs are all the same batch dimension
        features = features + torch.zeros(list(obs.shape[:-1]) + [features.shape[-1]])
        obs = obs + torch.zeros(list(features.shape[:-1]) + [obs.shape[-1]])
        self._precision_times_mean = self._precision_times_mean + obs.transpose(-2, -1).matmul(features)
        self._precision = self._precision + (features.transpose(-2, -1).matmul(features)).unsqueeze(-3)
        self._shape = self._shape + 0.5 * obs.shape[-2]
        self._reparametrized_rate = self._reparametrized_rate + 0.5 * (obs * obs).sum(-2)
        self.updated_canonical = False

    def downdate(self, obs, features=None):
        assert features is not None
        assert obs.shape[-2] == features.shape[-2]
        features = features + torch.zeros(list(obs.shape[:-1]) + [features.shape[-1]])
        obs = obs + torch.zeros(list(features.shape[:-1]) + [obs.shape[-1]])
        self._precision_times_mean = self._precision_times_mean - obs.transpose(-2, -1).matmul(features)
        self._precision = self._precision - (features.transpose(-2, -1).matmul(features)).unsqueeze(-3)
        self._shape = self._shape - 0.5 * obs.shape[-2]
        self._reparametrized_rate = self._reparametrized_rate - 0.5 * (obs * obs).sum(-2)
        self.updated_canonical = False

    def convert_to_canonical(self):
        if self.updated_canonical:
            return
        self._covariance = self._precision.inverse()
        self._mean = self._covariance.matmul(self._precision_times_mean.unsqueeze(-1)).squeeze(-1)
        self._rate = self._reparametrized_rate - 0.5 * (
            self._mean.unsqueeze(-2).matmul(self._precision).matmul(self._mean.unsqueeze(-1)).squeeze(-1).squeeze(-1)
        )
        self.updated_canonical = True

    @property
    def mean(self):
        self.convert_to_canonical()
        return self._mean


def main():
    torch.manual_seed(0)
    true_w = torch.tensor([[1.5, -0.5]])
    summary = NIGNormalRegressionSummary(torch.zeros(2), torch.eye(2), 3.0, 1.0)
    for batch in range(4):
        features = torch.randn(10, 2)
        obs = features.matmul(true_w.t()) + 0.1 * torch.randn(10, 1)
        summary.update(obs, features)
    # drop the last batch again (e.g. a held-out fold)
    summary.downdate(obs, features)
    mean = summary.mean
    print("posterior mean", mean)
    print(f"posterior mean has NaN: {torch.isnan(mean).any().item()}")


if __name__ == "__main__":
    main()
