# source: written for bench/holdout16 from RULES.md AG015 (helper train_one_epoch sums the loss tensors into epoch_loss, which feeds ReduceLROnPlateau)
# symptom: epoch loss keeps the graph: True
"""Link prediction on a random graph with a dot-product decoder over learned node embeddings, mini-batched edges
(fixed: the epoch total adds loss.item())."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_nodes = 50
edges = torch.randint(0, n_nodes, (2, 300))


class LinkPredictor(nn.Module):
    def __init__(self, n, dim=16):
        super().__init__()
        self.emb = nn.Embedding(n, dim)
        self.mix = nn.Linear(dim, dim)

    def forward(self, src, dst):
        hs, hd = self.mix(self.emb(src)), self.mix(self.emb(dst))
        return (hs * hd).sum(-1)


def train_one_epoch(model, optimizer, edges, batch_size=64):
    epoch_loss = 0.0
    perm = torch.randperm(edges.shape[1])
    for i in range(0, edges.shape[1], batch_size):
        pos = edges[:, perm[i:i + batch_size]]
        neg = torch.randint(0, n_nodes, pos.shape)
        logits = torch.cat([model(*pos), model(*neg)])
        labels = torch.cat([torch.ones(pos.shape[1]), torch.zeros(neg.shape[1])])
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss = epoch_loss + loss.item()
    return epoch_loss


model = LinkPredictor(n_nodes)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1)
for epoch in range(3):
    epoch_loss = train_one_epoch(model, optimizer, edges)
    scheduler.step(float(epoch_loss))
    print(f"epoch {epoch} loss {float(epoch_loss):.4f}")
print(f"epoch loss keeps the graph: {torch.is_tensor(epoch_loss) and epoch_loss.grad_fn is not None}")
