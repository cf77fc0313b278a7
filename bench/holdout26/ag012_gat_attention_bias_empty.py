# source: https://github.com/ML4ITS/mtad-gat-pytorch/issues/19 (pattern: graph-attention layer of an anomaly-detection model allocates its bias with torch.empty when use_bias=True and never initialises it, so outputs and loss become NaN)
# symptom: loss nan
"""MTAD-GAT style feature-attention layer on a small multivariate window, trained for a few steps."""
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)  # uninitialised memory is filled with NaN, as it may hold garbage
torch.manual_seed(0)


class FeatureAttentionLayer(nn.Module):
    def __init__(self, n_features, window_size, dropout=0.0, alpha=0.2, use_bias=True):
        super().__init__()
        self.n_features = n_features
        self.use_bias = use_bias
        self.lin = nn.Linear(2 * window_size, 2 * window_size)
        self.a = nn.Parameter(torch.empty((2 * window_size, 1)))
        nn.init.xavier_uniform_(self.a.data, gain=1.414)
        if self.use_bias:
            self.bias = nn.Parameter(torch.empty(n_features, n_features))  # expect: AG012
        self.leakyrelu = nn.LeakyReLU(alpha)
        self.dropout = dropout

    def forward(self, x):
        # x: (b, window, n_features) -> nodes are features
        v = x.permute(0, 2, 1)
        k = v.size(1)
        blocks = torch.cat((v.repeat_interleave(k, dim=1), v.repeat(1, k, 1)), dim=2)
        a_input = self.leakyrelu(self.lin(blocks)).view(v.size(0), k, k, -1)
        e = torch.matmul(a_input, self.a).squeeze(3)
        if self.use_bias:
            e = e + self.bias
        attention = torch.softmax(e, dim=2)
        h = torch.sigmoid(torch.matmul(attention, v))
        return h.permute(0, 2, 1)


layer = FeatureAttentionLayer(n_features=5, window_size=8)
head = nn.Linear(5, 5)
opt = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
x = torch.randn(4, 8, 5)
for epoch in range(3):
    recon = head(layer(x))
    loss = ((recon - x) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
