# source: https://go-mk-websites.co.uk/post/the-loss-in-gnn-doesnt-decrease
# symptom: embedding gradient all zero: True
# Clean twin: the loss takes the sigmoid scores themselves (the post's fix: remove the round() operation).
import torch
import torch.nn as nn


def train(emb, loss_fn, sigmoid, train_label, train_edge, epochs=3):
    optimizer = torch.optim.SGD(emb.parameters(), lr=0.1)
    for i in range(epochs):
        emb.train()
        optimizer.zero_grad()
        node_list_fir, node_list_sec = train_edge[0], train_edge[1]
        emb_list_fir, emb_list_sec = emb(node_list_fir), emb(node_list_sec)
        emb_torch = torch.sum(emb_list_fir * emb_list_sec, dim=1)
        emb_torch = sigmoid(emb_torch)
        loss = loss_fn(emb_torch, train_label)
        loss.backward()
        print(f"embedding gradient all zero: {bool((emb.weight.grad == 0).all())}")
        optimizer.step()
        print(f"epoch {i} loss {loss.item():.4f}")


torch.manual_seed(0)
num_nodes = 12
emb = nn.Embedding(num_nodes, 8)
train_edge = torch.randint(0, num_nodes, (2, 20))
train_label = (torch.rand(20) > 0.5).float()
train(emb, nn.BCELoss(), nn.Sigmoid(), train_label, train_edge)
