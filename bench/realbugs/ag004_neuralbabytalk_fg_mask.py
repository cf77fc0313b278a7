# source: https://github.com/jiasenlu/NeuralBabyTalk/issues/26
# symptom: [Oo]nly Tensors of floating point( and complex)? dtype can require gradients
# main.py builds opt.fg_mask as an integer tensor and TopDownModel(opt) -> CascadeCore(opt).__init__ wraps it as
# self.fg_mask = Parameter(opt.fg_mask), which requires grad by default. Re-created with the same constructor chain.
import argparse

import torch
import torch.nn as nn
from torch.nn import Parameter


class CascadeCore(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.fg_size = opt.fg_size
        self.fg_mask = Parameter(opt.fg_mask)  # expect: AG004
        self.fg_mask.requires_grad = False
        self.bn_fc = nn.Linear(opt.rnn_size, opt.rnn_size)

    def forward(self, fg_idx, h):
        return self.bn_fc(h) * self.fg_mask[fg_idx].float().sum(-1, keepdim=True)


class AttModel(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.rnn_size = opt.rnn_size
        self.embed = nn.Embedding(opt.vocab_size, opt.rnn_size)


class TopDownModel(AttModel):
    def __init__(self, opt):
        super().__init__(opt)
        self.ccr_core = CascadeCore(opt)


def build_fg_mask(fg_size, n_fine):
    """A 0/1 table: which fine-grained words belong to each detection class (integer, as loaded from the dataset)."""
    mask = torch.zeros(fg_size, n_fine, dtype=torch.long)
    for i in range(fg_size):
        mask[i, i % n_fine] = 1
    return mask


torch.manual_seed(0)
opt = argparse.Namespace(rnn_size=16, vocab_size=40, fg_size=6)
opt.fg_mask = build_fg_mask(opt.fg_size, 4)
model = TopDownModel(opt)
print(model.ccr_core(torch.tensor([1, 2]), torch.randn(2, 16)).shape)
