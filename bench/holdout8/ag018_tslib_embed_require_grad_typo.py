# source: https://github.com/thuml/Time-Series-Library/pull/743
# symptom: 'require_grad' set as a plain attribute instead of requires_grad: True
"""Time-Series-Library layers/Embed.py: PositionalEmbedding and FixedEmbedding write
`pe.require_grad = False` / `w.require_grad = False`. Tensors have no such flag, so the line only adds a
new Python attribute and does nothing (the pull request notes the tensors happen not to require grad
anyway, being built with torch.zeros).

Written for bench/holdout8 with the structure of layers/Embed.py (TokenEmbedding, PositionalEmbedding,
FixedEmbedding, TemporalEmbedding, DataEmbedding) feeding a small linear forecaster trained for a few
steps on random series with calendar marks.
"""
import math

import torch
import torch.nn as nn


class PositionalEmbedding(nn.Module):
    def __init__(self, d_model, max_len=500):
        super().__init__()
        pe = torch.zeros(max_len, d_model).float()
        pe.require_grad = False  # expect: AG018
        position = torch.arange(0, max_len).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.pe[:, :x.size(1)]


class TokenEmbedding(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        self.tokenConv = nn.Conv1d(in_channels=c_in, out_channels=d_model, kernel_size=3, padding=1,
                                   padding_mode="circular", bias=False)
        for m in self.modules():
            if isinstance(m, nn.Conv1d):
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="leaky_relu")

    def forward(self, x):
        return self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2)


class FixedEmbedding(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        w = torch.zeros(c_in, d_model).float()
        w.require_grad = False  # expect: AG018
        position = torch.arange(0, c_in).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        w[:, 0::2] = torch.sin(position * div_term)
        w[:, 1::2] = torch.cos(position * div_term)
        self.emb = nn.Embedding(c_in, d_model)
        self.emb.weight = nn.Parameter(w, requires_grad=False)

    def forward(self, x):
        return self.emb(x).detach()


class TemporalEmbedding(nn.Module):
    def __init__(self, d_model, embed_type="fixed", freq="h"):
        super().__init__()
        hour_size, weekday_size, day_size, month_size = 24, 7, 32, 13
        Embed = FixedEmbedding if embed_type == "fixed" else nn.Embedding
        self.hour_embed = Embed(hour_size, d_model)
        self.weekday_embed = Embed(weekday_size, d_model)
        self.day_embed = Embed(day_size, d_model)
        self.month_embed = Embed(month_size, d_model)

    def forward(self, x):
        x = x.long()
        return (self.hour_embed(x[:, :, 3]) + self.weekday_embed(x[:, :, 2]) + self.day_embed(x[:, :, 1])
                + self.month_embed(x[:, :, 0]))


class DataEmbedding(nn.Module):
    def __init__(self, c_in, d_model, embed_type="fixed", freq="h", dropout=0.1):
        super().__init__()
        self.value_embedding = TokenEmbedding(c_in=c_in, d_model=d_model)
        self.position_embedding = PositionalEmbedding(d_model=d_model)
        self.temporal_embedding = TemporalEmbedding(d_model=d_model, embed_type=embed_type, freq=freq)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x, x_mark):
        x = self.value_embedding(x) + self.temporal_embedding(x_mark) + self.position_embedding(x)
        return self.dropout(x)


class Model(nn.Module):
    def __init__(self, seq_len=24, pred_len=8, enc_in=3, d_model=16):
        super().__init__()
        self.pred_len = pred_len
        self.enc_embedding = DataEmbedding(enc_in, d_model)
        self.predict = nn.Linear(seq_len, pred_len)
        self.projection = nn.Linear(d_model, enc_in)

    def forward(self, x_enc, x_mark_enc):
        enc_out = self.enc_embedding(x_enc, x_mark_enc)
        enc_out = self.predict(enc_out.permute(0, 2, 1)).permute(0, 2, 1)
        return self.projection(enc_out)


def make_batch(batch_size=4, seq_len=24, pred_len=8, enc_in=3):
    x = torch.randn(batch_size, seq_len, enc_in)
    y = torch.randn(batch_size, pred_len, enc_in)
    marks = torch.stack([torch.randint(1, 13, (batch_size, seq_len)), torch.randint(1, 32, (batch_size, seq_len)),
                         torch.randint(0, 7, (batch_size, seq_len)), torch.randint(0, 24, (batch_size, seq_len))], dim=-1)
    return x, marks.float(), y


def main():
    torch.manual_seed(0)
    model = Model()
    model_optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.MSELoss()
    for i in range(5):
        batch_x, batch_x_mark, batch_y = make_batch()
        model_optim.zero_grad()
        outputs = model(batch_x, batch_x_mark)
        loss = criterion(outputs, batch_y)
        loss.backward()
        model_optim.step()
        print(f"iters: {i + 1} | loss: {loss.item():.4f}")
    pe = model.enc_embedding.position_embedding.pe._base  # the tensor the constructor flagged, before unsqueeze
    print("'require_grad' set as a plain attribute instead of requires_grad:", hasattr(pe, "require_grad"))


if __name__ == "__main__":
    main()
