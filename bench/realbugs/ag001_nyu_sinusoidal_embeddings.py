# source: https://github.com/Atcold/NYU-DLSP20/issues/765
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
# The transformer notebook's Embeddings.__init__ passes self.position_embeddings.weight to a helper,
# create_sinusoidal_embeddings, which writes E[:, 0::2] = ... into the (trainable) embedding weight.
import math

import torch
import torch.nn as nn


def create_sinusoidal_embeddings(nb_p, dim, E):
    theta = torch.tensor([[p / math.pow(10000, 2 * (j // 2) / dim) for j in range(dim)] for p in range(nb_p)])
    E[:, 0::2] = torch.FloatTensor(torch.sin(theta[:, 0::2]))  # expect: AG001
    E[:, 1::2] = torch.FloatTensor(torch.cos(theta[:, 1::2]))  # expect: AG001
    E.detach_()
    E.requires_grad = False


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings, p):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model, padding_idx=1)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        create_sinusoidal_embeddings(nb_p=max_position_embeddings, dim=d_model, E=self.position_embeddings.weight)
        self.LayerNorm = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).expand_as(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class TransformerClassifier(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, conv_hidden_dim, input_vocab_size, num_answers):
        super().__init__()
        self.embeddings = Embeddings(d_model, input_vocab_size, maximum_position_encoding, p=0.1)
        layer = nn.TransformerEncoderLayer(d_model, num_heads, conv_hidden_dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers)
        self.dense = nn.Linear(d_model, num_answers)

    def forward(self, x):
        x = self.encoder(self.embeddings(x))
        x, _ = torch.max(x, dim=1)
        return self.dense(x)


torch.manual_seed(0)
maximum_position_encoding = 64
model = TransformerClassifier(num_layers=1, d_model=32, num_heads=2, conv_hidden_dim=128,
                              input_vocab_size=500, num_answers=2)
print(model(torch.randint(0, 500, (4, 10))).shape)
