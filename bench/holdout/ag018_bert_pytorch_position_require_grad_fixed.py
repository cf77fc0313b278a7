# source: https://github.com/codertimo/BERT-pytorch/pull/104
# symptom: stray attribute require_grad on pe: True
# Clean twin: the PR's fix, pe.requires_grad = False.
import math

import torch
import torch.nn as nn


class PositionalEmbedding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        # Compute the positional encodings once in log space.
        pe = torch.zeros(max_len, d_model).float()
        pe.requires_grad = False
        print("stray attribute require_grad on pe:", "require_grad" in vars(pe), "| pe.requires_grad:", pe.requires_grad)
        position = torch.arange(0, max_len).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        self.register_buffer('pe', pe)

    def forward(self, x):
        return self.pe[:, :x.size(1)]


class BERTEmbedding(nn.Module):
    def __init__(self, vocab_size, embed_size, dropout=0.1):
        super().__init__()
        self.token = nn.Embedding(vocab_size, embed_size, padding_idx=0)
        self.position = PositionalEmbedding(d_model=embed_size)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, sequence):
        return self.dropout(self.token(sequence) + self.position(sequence))


emb = BERTEmbedding(vocab_size=20, embed_size=8)
print(emb(torch.randint(1, 20, (2, 5))).shape)
