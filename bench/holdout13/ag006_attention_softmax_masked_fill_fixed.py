# source: holdout13 short program (no report)
# symptom: modified by an inplace operation
"""Text classifier: token embeddings pooled by a learned attention query that ignores padding (written by hand in the
module's `forward`).

Clean twin: the padding mask is applied out of place (`attn = attn.masked_fill(...)`).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttnPoolClassifier(nn.Module):
    def __init__(self, vocab=100, dim=32, n_cls=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.query = nn.Parameter(torch.randn(dim) * 0.1)
        self.fc = nn.Linear(dim, n_cls)

    def forward(self, ids):
        h = self.emb(ids)
        attn = torch.softmax(h @ self.query, dim=1)
        attn = attn.masked_fill(ids == 0, 0.0)
        attn = attn / attn.sum(1, keepdim=True)
        return self.fc((attn.unsqueeze(-1) * h).sum(1))


torch.manual_seed(0)
ids = torch.randint(1, 100, (96, 12))
lengths = torch.randint(4, 13, (96,))
ids[torch.arange(12).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
labels = torch.randint(0, 3, (96,))
model = AttnPoolClassifier()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for xb, yb in zip(ids.split(32), labels.split(32)):
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
