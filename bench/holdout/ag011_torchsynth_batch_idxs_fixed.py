# source: https://github.com/torchsynth/torchsynth/issues/376
# symptom: UserWarning: torch.range is deprecated
# Clean twin: PR 378's torch.arange with the exclusive end.
import torch
import torch.nn as nn


class AbstractSynth(nn.Module):
    def __init__(self, batch_size=4, n_params=3):
        super().__init__()
        self.batch_size = batch_size
        self.n_params = n_params

    def randomize(self, seeds):
        gen = torch.Generator()
        rows = []
        for seed in seeds.tolist():
            gen.manual_seed(int(seed))
            rows.append(torch.rand(self.n_params, generator=gen))
        return torch.stack(rows)

    def output(self, params):
        t = torch.linspace(0, 1, 64)
        return torch.sin(2 * torch.pi * (100 + 400 * params[:, :1]) * t) * params[:, 1:2]

    def forward(self, batch_idx=None):
        if batch_idx is not None:
            idxs = torch.arange(
                self.batch_size * batch_idx,
                self.batch_size * (batch_idx + 1),
            )
            assert len(idxs) == self.batch_size
            params = self.randomize(idxs)
        else:
            params = torch.rand(self.batch_size, self.n_params)
        return self.output(params)


synth = AbstractSynth()
audio = synth(batch_idx=2)
print(audio.shape)
