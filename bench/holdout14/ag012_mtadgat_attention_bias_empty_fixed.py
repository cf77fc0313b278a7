"""MTAD-GAT's graph-attention layers with their biases initialised to zero (clean twin).

`FeatureAttentionLayer` and `TemporalAttentionLayer` (with the default `use_bias=True`) create
`self.bias = nn.Parameter(torch.empty(k, k))` and add it to the attention logits (`e += self.bias`). Whatever the
allocator left there goes into the softmax: reported as NaN predictions and reconstructions after the feature GAT and
as losses that are always nan. PyTorch's deterministic mode fills uninitialised memory with NaN, so the read shows on
every run here.

Clean twin: the fix of pull request #27 (the zero initialisation suggested in the issue): `self.bias =
nn.Parameter(torch.zeros(k, k))` in both layers.
"""
# source: https://github.com/ML4ITS/mtad-gat-pytorch/issues/13
# symptom: loss nan
import math

import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)


class ConvLayer(nn.Module):
    def __init__(self, n_features, kernel_size=7):
        super().__init__()
        self.padding = nn.ConstantPad1d((kernel_size - 1) // 2, 0.0)
        self.conv = nn.Conv1d(n_features, n_features, kernel_size)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.padding(x.permute(0, 2, 1))
        return self.relu(self.conv(x)).permute(0, 2, 1)


class FeatureAttentionLayer(nn.Module):
    def __init__(self, n_features, window_size, dropout, alpha, use_bias=True):
        super().__init__()
        self.window_size = window_size
        self.num_nodes = n_features
        self.dropout = dropout
        self.use_bias = use_bias
        embed_dim = 2 * window_size
        self.lin = nn.Linear(2 * window_size, embed_dim)
        self.a = nn.Parameter(torch.empty((embed_dim, 1)))
        nn.init.xavier_uniform_(self.a, gain=1.414)
        if self.use_bias:
            self.bias = nn.Parameter(torch.zeros(n_features, n_features))
        self.leakyrelu = nn.LeakyReLU(alpha)

    def forward(self, x):
        x = x.permute(0, 2, 1)
        a_input = self.leakyrelu(self.lin(self._make_attention_input(x)))
        e = torch.matmul(a_input, self.a).squeeze(3)
        if self.use_bias:
            e += self.bias
        attention = torch.dropout(torch.softmax(e, dim=2), self.dropout, train=self.training)
        return torch.sigmoid(torch.matmul(attention, x)).permute(0, 2, 1)

    def _make_attention_input(self, v):
        k = self.num_nodes
        combined = torch.cat((v.repeat_interleave(k, dim=1), v.repeat(1, k, 1)), dim=2)
        return combined.view(v.size(0), k, k, 2 * self.window_size)


class TemporalAttentionLayer(nn.Module):
    def __init__(self, n_features, window_size, dropout, alpha, use_bias=True):
        super().__init__()
        self.n_features = n_features
        self.num_nodes = window_size
        self.dropout = dropout
        self.use_bias = use_bias
        embed_dim = 2 * n_features
        self.lin = nn.Linear(2 * n_features, embed_dim)
        self.a = nn.Parameter(torch.empty((embed_dim, 1)))
        nn.init.xavier_uniform_(self.a, gain=1.414)
        if self.use_bias:
            self.bias = nn.Parameter(torch.zeros(window_size, window_size))
        self.leakyrelu = nn.LeakyReLU(alpha)

    def forward(self, x):
        a_input = self.leakyrelu(self.lin(self._make_attention_input(x)))
        e = torch.matmul(a_input, self.a).squeeze(3)
        if self.use_bias:
            e += self.bias
        attention = torch.dropout(torch.softmax(e, dim=2), self.dropout, train=self.training)
        return torch.sigmoid(torch.matmul(attention, x))

    def _make_attention_input(self, v):
        k = self.num_nodes
        combined = torch.cat((v.repeat_interleave(k, dim=1), v.repeat(1, k, 1)), dim=2)
        return combined.view(v.size(0), k, k, 2 * self.n_features)


class MTAD_GAT(nn.Module):
    def __init__(self, n_features, window_size, out_dim, gru_hid_dim=16, dropout=0.2, alpha=0.2):
        super().__init__()
        self.window_size = window_size
        self.conv = ConvLayer(n_features)
        self.feature_gat = FeatureAttentionLayer(n_features, window_size, dropout, alpha)
        self.temporal_gat = TemporalAttentionLayer(n_features, window_size, dropout, alpha)
        self.gru = nn.GRU(3 * n_features, gru_hid_dim, batch_first=True)
        self.forecasting_model = nn.Sequential(nn.Linear(gru_hid_dim, 16), nn.ReLU(), nn.Linear(16, out_dim))
        self.recon_rnn = nn.GRU(gru_hid_dim, gru_hid_dim, batch_first=True)
        self.recon_fc = nn.Linear(gru_hid_dim, out_dim)

    def forward(self, x):
        x = self.conv(x)
        h_cat = torch.cat([x, self.feature_gat(x), self.temporal_gat(x)], dim=2)
        _, h_end = self.gru(h_cat)
        h_end = h_end[-1]
        predictions = self.forecasting_model(h_end)
        h_rep = h_end.repeat_interleave(self.window_size, dim=1).view(x.size(0), self.window_size, -1)
        recons = self.recon_fc(self.recon_rnn(h_rep)[0])
        return predictions, recons


def main():
    torch.manual_seed(0)
    n_features, window = 5, 12
    series = torch.sin(torch.linspace(0, 20 * math.pi, 400)).unsqueeze(1) + 0.1 * torch.randn(400, n_features)
    windows = torch.stack([series[i:i + window] for i in range(0, 300, 3)])
    targets = torch.stack([series[i + window] for i in range(0, 300, 3)])
    model = MTAD_GAT(n_features, window, n_features)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    forecast_criterion, recon_criterion = nn.MSELoss(), nn.MSELoss()
    for epoch in range(2):
        losses = []
        for start in range(0, len(windows), 25):
            x, y = windows[start:start + 25], targets[start:start + 25]
            optimizer.zero_grad()
            preds, recons = model(x)
            loss = torch.sqrt(forecast_criterion(preds, y)) + torch.sqrt(recon_criterion(recons, x))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        mean = sum(losses) / len(losses)
        print("loss nan" if math.isnan(mean) else f"epoch {epoch} loss {mean:.4f}")


if __name__ == "__main__":
    main()
