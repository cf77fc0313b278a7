# source: https://github.com/torchsynth/torchsynth/issues/376
# symptom: UserWarning: torch.range is deprecated
# torchsynth/synth.py's AbstractSynth builds the batch's sample indices with torch.range(...) (end-inclusive) to
# seed each voice's random parameters; torch 1.10 warns on every forward. Fixed by PR 378 with torch.arange.
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
            idxs = torch.range(  # expect: AG011
                self.batch_size * batch_idx,
                self.batch_size * (batch_idx + 1) - 1,
            )
            assert len(idxs) == self.batch_size
            params = self.randomize(idxs)
        else:
            params = torch.rand(self.batch_size, self.n_params)
        return self.output(params)


synth = AbstractSynth()
audio = synth(batch_idx=2)
print(audio.shape)
