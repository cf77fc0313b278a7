# source: https://github.com/tail-unica/hopwise/issues/271
# symptom: Training loss is nan
"""hopwise KGRec: `AttnHGCN.__init__` creates the attention projection as a bare
`nn.Parameter(torch.Tensor(embedding_size, embedding_size))`; its `nn.init.xavier_uniform_(self.W_Q)` is
commented out and `self.apply(xavier_uniform_initialization)` only initialises `nn.Embedding` and
`nn.Linear` modules, so W_Q keeps whatever the allocator left there and training intermittently fails with
"Training loss is nan".

Written for this set: torch_scatter/torch_geometric's `scatter_sum` and `softmax` are written with
`index_add_`, the knowledge graph and the interactions are a few random edges, and PyTorch's deterministic
mode (which fills uninitialised memory with NaN) makes the uninitialised read visible on every run.
"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)


def xavier_uniform_initialization(module):
    if isinstance(module, nn.Embedding):
        nn.init.xavier_uniform_(module.weight.data)
    elif isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight.data)
        if module.bias is not None:
            nn.init.constant_(module.bias.data, 0)


def scatter_sum(src, index, dim_size):
    out = torch.zeros(dim_size, *src.shape[1:], dtype=src.dtype)
    return out.index_add(0, index, src)


def scatter_softmax(score, index, dim_size):
    score = score - score.max()
    exp = score.exp()
    return exp / (scatter_sum(exp, index, dim_size)[index] + 1e-16)


class AttnHGCN(nn.Module):
    """Heterogeneous graph convolution with relation-aware attention."""

    def __init__(self, embedding_size, n_hops, n_users, n_relations, mess_dropout_rate=0.1):
        super().__init__()
        self.embedding_size = embedding_size
        self.n_hops = n_hops
        self.n_relations = n_relations
        self.n_users = n_users
        self.relation_embedding = nn.Embedding(self.n_relations - 1, self.embedding_size)
        self.W_Q = nn.Parameter(torch.Tensor(self.embedding_size, self.embedding_size))  # expect: AG012
        self.n_heads = 2
        self.d_k = self.embedding_size // self.n_heads
        # nn.init.xavier_uniform_(self.W_Q)
        self.mess_dropout = nn.Dropout(p=mess_dropout_rate)
        self.apply(xavier_uniform_initialization)

    def shared_layer_agg(self, user_emb, entity_emb, edge_index, edge_type, inter_edge, inter_edge_w):
        n_entities = entity_emb.shape[0]
        head, tail = edge_index
        query = (entity_emb[head] @ self.W_Q).view(-1, self.n_heads, self.d_k)
        key = (entity_emb[tail] @ self.W_Q).view(-1, self.n_heads, self.d_k)
        key = key * self.relation_embedding(edge_type).view(-1, self.n_heads, self.d_k)
        edge_attn_score = (query * key).sum(dim=-1) / math.sqrt(self.d_k)
        edge_attn_score = scatter_softmax(edge_attn_score, head, n_entities)
        value = (entity_emb[tail] * self.relation_embedding(edge_type)).view(-1, self.n_heads, self.d_k)
        entity_agg = (value * edge_attn_score.view(-1, self.n_heads, 1)).view(-1, self.n_heads * self.d_k)
        entity_agg = scatter_sum(entity_agg, head, n_entities)
        item_agg = inter_edge_w.unsqueeze(-1) * entity_emb[inter_edge[1, :]]
        user_agg = scatter_sum(item_agg, inter_edge[0, :], user_emb.shape[0])
        return entity_agg, user_agg

    def forward(self, user_emb, entity_emb, edge_index, edge_type, inter_edge, inter_edge_w):
        entity_res, user_res = entity_emb, user_emb
        for _ in range(self.n_hops):
            entity_emb, user_emb = self.shared_layer_agg(user_emb, entity_emb, edge_index, edge_type,
                                                         inter_edge, inter_edge_w)
            entity_emb = nn.functional.normalize(self.mess_dropout(entity_emb))
            user_emb = nn.functional.normalize(self.mess_dropout(user_emb))
            entity_res = entity_res + entity_emb
            user_res = user_res + user_emb
        return entity_res, user_res


class KGRec(nn.Module):
    def __init__(self, n_users, n_entities, n_relations, embedding_size=16, n_hops=2):
        super().__init__()
        self.n_users = n_users
        self.user_embedding = nn.Embedding(n_users, embedding_size)
        self.entity_embedding = nn.Embedding(n_entities, embedding_size)
        self.gcn = AttnHGCN(embedding_size, n_hops, n_users, n_relations)
        self.apply(xavier_uniform_initialization)

    def forward(self, graph):
        edge_index, edge_type, inter_edge, inter_edge_w = graph
        entity_all, user_all = self.gcn(self.user_embedding.weight, self.entity_embedding.weight,
                                        edge_index, edge_type, inter_edge, inter_edge_w)
        return user_all, entity_all

    def calculate_loss(self, graph, users, pos_items, neg_items):
        user_all, entity_all = self.forward(graph)
        u, p, n = user_all[users], entity_all[pos_items], entity_all[neg_items]
        pos_scores, neg_scores = (u * p).sum(-1), (u * n).sum(-1)
        bpr = -torch.nn.functional.logsigmoid(pos_scores - neg_scores).mean()
        reg = 1e-4 * (u.norm(2).pow(2) + p.norm(2).pow(2) + n.norm(2).pow(2)) / users.numel()
        return bpr + reg


def main():
    n_users, n_items, n_entities, n_relations = 8, 10, 20, 4
    edge_index = torch.randint(0, n_entities, (2, 60))
    edge_type = torch.randint(0, n_relations - 1, (60,))
    inter_edge = torch.stack([torch.randint(0, n_users, (30,)), torch.randint(0, n_items, (30,))])
    inter_edge_w = torch.ones(30) / 4
    graph = (edge_index, edge_type, inter_edge, inter_edge_w)
    model = KGRec(n_users, n_entities, n_relations)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        users = torch.randint(0, n_users, (16,))
        pos_items = torch.randint(0, n_items, (16,))
        neg_items = torch.randint(0, n_items, (16,))
        optimizer.zero_grad()
        loss = model.calculate_loss(graph, users, pos_items, neg_items)
        if torch.isnan(loss):
            raise ValueError("Training loss is nan")
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch}: train loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
