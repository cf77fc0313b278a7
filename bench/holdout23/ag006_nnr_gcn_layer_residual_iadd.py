# source: https://github.com/Veason-silverbullet/NNR/issues/3
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Veason-silverbullet/NNR (#3, fixed by commit 5dd9f16 "update to be compatible with pytorch-11.1"):
GCNLayer.forward with `residual=True` applies `out = F.relu(out)` and then `out += feature`; relu saved
its output for backward, so training the news-recommendation model with its residual GCN raises at
`loss.backward()` (on torch >= 1.10).  (Stand-ins: random user-history node features and graphs, a
dot-product click predictor.)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, residual=False, layer_norm=False):
        super(GCNLayer, self).__init__()
        self.residual = residual
        self.layer_norm = layer_norm
        if self.residual and in_dim != out_dim:
            raise Exception('To facilitate residual connection, in_dim must equal to out_dim')
        self.W = nn.Linear(in_features=in_dim, out_features=out_dim, bias=True)
        if self.layer_norm:
            self.layer_normalization = nn.LayerNorm(normalized_shape=[out_dim])

    def initialize(self):
        nn.init.xavier_uniform_(self.W.weight, gain=nn.init.calculate_gain('relu'))
        nn.init.zeros_(self.W.bias)

    # feature : [batch_size, node_num, feature_dim]
    # graph   : [batch_size, node_num, node_num]
    def forward(self, feature, graph):
        out = self.W(torch.bmm(graph, feature))
        if self.layer_norm:
            out = self.layer_normalization(out)
        out = F.relu(out)
        if self.residual:
            out += feature  # expect: AG006
        return out


class GCN(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_dim=0, num_layers=1, dropout=0.1,
                 residual=False, layer_norm=False):
        super(GCN, self).__init__()
        self.num_layers = num_layers
        self.gcn_layers = []
        if self.num_layers == 1:
            self.gcn_layers.append(GCNLayer(in_dim, out_dim, residual=residual, layer_norm=layer_norm))
        else:
            self.dropout = nn.Dropout(dropout, inplace=True)
            self.gcn_layers.append(GCNLayer(in_dim, hidden_dim, residual=residual, layer_norm=layer_norm))
            for i in range(1, self.num_layers - 1):
                self.gcn_layers.append(GCNLayer(hidden_dim, hidden_dim, residual=residual, layer_norm=layer_norm))
            self.gcn_layers.append(GCNLayer(hidden_dim, out_dim, residual=residual, layer_norm=layer_norm))
        self.gcn_layers = nn.ModuleList(self.gcn_layers)

    def initialize(self):
        for gcn_layer in self.gcn_layers:
            gcn_layer.initialize()

    def forward(self, feature, graph):
        out = feature
        for i in range(self.num_layers - 1):
            out = self.dropout(self.gcn_layers[i](out, graph))
        out = self.gcn_layers[self.num_layers - 1](out, graph)
        return out


class UserGraphEncoder(nn.Module):
    """Encodes the clicked-news graph of a user and scores candidate news."""

    def __init__(self, news_dim=32, num_layers=2):
        super().__init__()
        self.news_proj = nn.Linear(48, news_dim)
        self.gcn = GCN(news_dim, news_dim, news_dim, num_layers=num_layers, residual=True, layer_norm=True)
        self.gcn.initialize()

    def forward(self, history, graph, candidates):
        nodes = self.news_proj(history)                   # [batch, node_num, news_dim]
        user = self.gcn(nodes, graph).mean(dim=1)         # [batch, news_dim]
        cand = self.news_proj(candidates)                 # [batch, news_num, news_dim]
        return torch.bmm(cand, user.unsqueeze(2)).squeeze(2)


def main():
    torch.manual_seed(0)
    model = UserGraphEncoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch, node_num, news_num = 8, 10, 5
    for step in range(3):
        history = torch.randn(batch, node_num, 48)
        adj = (torch.rand(batch, node_num, node_num) > 0.7).float() + torch.eye(node_num)
        graph = adj / adj.sum(dim=2, keepdim=True)
        candidates = torch.randn(batch, news_num, 48)
        labels = torch.zeros(batch, dtype=torch.long)   # the first candidate is the clicked one
        optimizer.zero_grad()
        logits = model(history, graph, candidates)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
