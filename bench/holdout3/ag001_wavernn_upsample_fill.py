# source: https://github.com/pytorch/audio/pull/1993
# symptom: a leaf Variable that requires grad is being used in an in-place operation
# Replacing the legacy conv.weight.data.fill_ initialisation in torchaudio's WaveRNN upsample network with
# conv.weight.fill_(...) raises "a leaf Variable that requires grad is being used in an in-place operation"; the
# reviewer: "You can use torch.nn.init.constant_(tensor, val) to initialize the conv.weight".
import torch
from torch import nn


class _Stretch2d(nn.Module):
    def __init__(self, time_scale, freq_scale):
        super().__init__()
        self.freq_scale = freq_scale
        self.time_scale = time_scale

    def forward(self, specgram):
        return specgram.repeat_interleave(self.freq_scale, -2).repeat_interleave(self.time_scale, -1)


class _UpsampleNetwork(nn.Module):
    def __init__(self, upsample_scales, n_freq=8):
        super().__init__()
        up_layers = []
        for scale in upsample_scales:
            stretch = _Stretch2d(scale, 1)
            conv = nn.Conv2d(in_channels=1, out_channels=1, kernel_size=(1, scale * 2 + 1), padding=(0, scale), bias=False)
            conv.weight.fill_(1.0 / (scale * 2 + 1))  # expect: AG001
            up_layers.append(stretch)
            up_layers.append(conv)
        self.upsample_layers = nn.Sequential(*up_layers)

    def forward(self, specgram):
        return self.upsample_layers(specgram.unsqueeze(1)).squeeze(1)


net = _UpsampleNetwork([2, 2])
print(net(torch.randn(1, 8, 5)).shape)
