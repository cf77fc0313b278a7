# source: holdout11 short program (no report)
# symptom: [Oo]nly Tensors of floating point
"""Gradient saliency for a tiny text classifier: the embeddings (float) require grad, as the usual fix does."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, SEQ = 50, 16, 12


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.out = nn.Linear(DIM, 2)

    def forward(self, ids=None, embeds=None):
        if embeds is None:
            embeds = self.emb(ids)
        return self.out(embeds.mean(dim=1))


model = BagClassifier()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(30):
    ids = torch.randint(0, VOCAB, (32, SEQ))
    labels = (ids[:, 0] % 2)
    opt.zero_grad()
    loss = F.cross_entropy(model(ids), labels)
    loss.backward()
    opt.step()
print(f"train loss {loss.item():.4f}")

# saliency of each token for the predicted class
ids = torch.randint(0, VOCAB, (1, SEQ))
embeds = model.emb(ids).detach().requires_grad_()
logits = model(embeds=embeds)
logits[0, logits.argmax()].backward()
saliency = embeds.grad.norm(dim=-1)
print("saliency", saliency)
