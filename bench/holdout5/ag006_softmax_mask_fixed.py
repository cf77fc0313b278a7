# source: written for bench/holdout5 (short training program, attention pooling over padded sequences, functional helper)
import torch
from torch import nn

torch.manual_seed(12)

emb_dim, n_classes = 16, 3
scorer = nn.Linear(emb_dim, 1)
classifier = nn.Linear(emb_dim, n_classes)
opt = torch.optim.SGD(list(scorer.parameters()) + list(classifier.parameters()), lr=0.1)


def attention_pool(tokens, pad_mask):
    scores = scorer(tokens).squeeze(-1)
    weights = torch.softmax(scores, dim=-1)
    weights = weights.masked_fill(pad_mask, 0.0)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return (weights.unsqueeze(-1) * tokens).sum(dim=1)


tokens = torch.randn(20, 7, emb_dim)
lengths = torch.randint(2, 8, (20,))
pad_mask = torch.arange(7).unsqueeze(0) >= lengths.unsqueeze(1)
labels = torch.randint(0, n_classes, (20,))

for step in range(30):
    pooled = attention_pool(tokens, pad_mask)
    loss = nn.functional.cross_entropy(classifier(pooled), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f}")
