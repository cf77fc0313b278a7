# source: https://github.com/pytorch/audio/pull/2175
# symptom: mean stays torch\.float32 after \.to\(torch\.float64\)
# torchaudio's RNN-T pipeline GlobalStatsNormalization.__init__ stored mean/invstddev (read from a global-stats file)
# as plain tensors, so moving the module (device or dtype) leaves them behind. Re-created with the stats passed in a dict.
import torch


class GlobalStatsNormalization(torch.nn.Module):
    def __init__(self, global_stats):
        super().__init__()
        self.mean = torch.tensor(global_stats["mean"])  # expect: AG009
        self.invstddev = torch.tensor(global_stats["invstddev"])  # expect: AG009

    def forward(self, input):
        return (input - self.mean) * self.invstddev


class FeatureExtractor(torch.nn.Module):
    def __init__(self, global_stats, n_mels=4):
        super().__init__()
        self.proj = torch.nn.Linear(n_mels, n_mels)
        self.normalize = GlobalStatsNormalization(global_stats)

    def forward(self, features):
        return self.normalize(self.proj(features))


gstats = {"mean": [0.5, -0.1, 0.2, 0.0], "invstddev": [1.2, 0.8, 1.0, 1.1]}
pipeline = FeatureExtractor(gstats).to(torch.float64)
print(f"proj.weight is {pipeline.proj.weight.dtype}")
print(f"mean stays {pipeline.normalize.mean.dtype} after .to(torch.float64)")
out = pipeline(torch.randn(2, 4, dtype=torch.float64))
print(out.dtype)
