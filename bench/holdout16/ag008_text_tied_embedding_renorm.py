# source: written for bench/holdout16 from RULES.md AG008 (notebook-style cells: tied input/output embedding renormalised through .data after the forward, before backward)
# symptom: hidden-state gradients differ from the clean computation: True
"""Tiny language model with tied embeddings (notebook cells); the embedding rows are kept at unit norm."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM = 40, 12

# %% model
emb = nn.Embedding(VOCAB, DIM)
rnn = nn.GRU(DIM, DIM, batch_first=True)
opt = torch.optim.Adam(list(emb.parameters()) + list(rnn.parameters()), lr=1e-2)
corpus = torch.randint(0, VOCAB, (8, 16))

# %% train
differs = False
for step in range(4):
    opt.zero_grad()
    h, _ = rnn(emb(corpus[:, :-1]))
    h.retain_grad()
    logits = h @ emb.weight.T
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), corpus[:, 1:].reshape(-1))
    ref_h = h.detach().requires_grad_()
    ref_loss = F.cross_entropy((ref_h @ emb.weight.detach().clone().T).reshape(-1, VOCAB), corpus[:, 1:].reshape(-1))
    ref_grad, = torch.autograd.grad(ref_loss, [ref_h])
    emb.weight.data.div_(emb.weight.data.norm(dim=1, keepdim=True))  # expect: AG008
    loss.backward()
    opt.step()
    differs |= not torch.allclose(h.grad, ref_grad, atol=1e-6)
    print(f"step {step} loss {loss.item():.4f}")

# %% report
print(f"hidden-state gradients differ from the clean computation: {differs}")
