# source: https://github.com/dmlc/dgl/commit/9a6b81ef7d3ae032e501ec09ca4a7dc17e31d3e2
# symptom: train_loss keeps the graph of every batch: True
"""dmlc/dgl examples/pytorch/compGCN/main.py after #3663 (fixed): the loop stores the loss value,
`train_loss.append(tr_loss.item())`, so no batch's autograd graph outlives its step."""
from time import time

import torch as th
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class CompGraphConv(nn.Module):
    """relation-composed graph convolution ('sub' composition) on a dense normalised adjacency"""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.W_O = nn.Linear(in_dim, out_dim)
        self.W_S = nn.Linear(in_dim, out_dim)
        self.W_R = nn.Linear(in_dim, out_dim)
        self.bn = nn.BatchNorm1d(out_dim)

    def forward(self, adj, rel_of_edge, n_in_feats, r_feats):
        comp = n_in_feats[None, :, :] - r_feats[rel_of_edge]      # (N, N, d): h_u - h_r per edge
        msg = (adj[:, :, None] * comp).sum(1)
        n_out = self.bn(self.W_O(msg) + self.W_S(n_in_feats))
        return th.tanh(n_out), self.W_R(r_feats)


class CompGCN_ConvE(nn.Module):
    def __init__(self, num_rel, num_ent, in_dim, layer_size, num_filt=4, k_w=4, k_h=4):
        super().__init__()
        self.n_embds = nn.Parameter(th.randn(num_ent, in_dim) * 0.1)
        self.rel_embds = nn.Parameter(th.randn(num_rel, in_dim) * 0.1)
        self.layers = nn.ModuleList([CompGraphConv(in_dim, layer_size)])
        self.k_w, self.k_h = k_w, k_h
        self.conv = nn.Conv2d(1, num_filt, 3)
        flat = num_filt * (2 * k_w - 2) * (k_h - 2)
        self.fc = nn.Linear(flat, layer_size)
        self.bias = nn.Parameter(th.zeros(num_ent))

    def forward(self, graph, sub, rel):
        adj, rel_of_edge = graph
        n_feats, r_feats = self.n_embds, self.rel_embds
        for layer in self.layers:
            n_feats, r_feats = layer(adj, rel_of_edge, n_feats, r_feats)
        sub_emb, rel_emb = n_feats[sub, :], r_feats[rel, :]
        stack = th.cat([sub_emb.view(-1, 1, self.k_w, self.k_h), rel_emb.view(-1, 1, self.k_w, self.k_h)], 2)
        x = F.relu(self.conv(stack)).flatten(1)
        x = F.relu(self.fc(x))
        return th.sigmoid(th.mm(x, n_feats.transpose(1, 0)) + self.bias)


def main():
    th.manual_seed(0)
    num_ent, num_rel = 12, 3
    adj = (th.rand(num_ent, num_ent) < 0.3).float()
    adj = adj / adj.sum(1, keepdim=True).clamp(min=1)
    graph = (adj, th.randint(0, num_rel, (num_ent, num_ent)))
    batches = [(th.stack([th.randint(0, num_ent, (6,)), th.randint(0, num_rel, (6,)),
                          th.randint(0, num_ent, (6,))], 1), (th.rand(6, num_ent) < 0.2).float())
               for _ in range(4)]
    compgcn_model = CompGCN_ConvE(num_rel, num_ent, 16, 16)
    loss_fn = th.nn.BCELoss()
    optimizer = optim.Adam(compgcn_model.parameters(), lr=0.001)
    for epoch in range(2):
        compgcn_model.train()
        train_loss = []
        t0 = time()
        for step, batch in enumerate(batches):
            triple, label = batch[0], batch[1]
            sub, rel, obj, label = triple[:, 0], triple[:, 1], triple[:, 2], label
            logits = compgcn_model(graph, sub, rel)
            # compute loss
            tr_loss = loss_fn(logits, label)
            train_loss.append(tr_loss.item())
            # backward
            optimizer.zero_grad()
            tr_loss.backward()
            optimizer.step()
        kept = any(isinstance(l, th.Tensor) and l.grad_fn is not None for l in train_loss)
        train_loss = sum(train_loss)  # np.sum in the repository
        print("In epoch {}, Train Loss: {:.4f}, Train time: {:.2f}".format(epoch, float(train_loss), time() - t0))
    print('train_loss keeps the graph of every batch:', kept)


if __name__ == '__main__':
    main()
