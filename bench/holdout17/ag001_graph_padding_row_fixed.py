# source: written for bench/holdout17 from RULES.md AG001 (notebook cells: a free node-embedding table whose padding row is zeroed by index assignment)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Notebook-style link prediction with a free embedding table (DeepWalk-like), cell by cell."""
import torch
import torch.nn.functional as F

# %% data
torch.manual_seed(1)
num_nodes, dim, PAD = 50, 16, 0
edges = torch.randint(1, num_nodes, (2, 300))

# %% parameters
node_emb = torch.randn(num_nodes, dim, requires_grad=True)
with torch.no_grad():
    node_emb[PAD] = 0.0
opt = torch.optim.Adam([node_emb], lr=0.01)

# %% train
for step in range(20):
    src, dst = edges
    neg = torch.randint(1, num_nodes, dst.shape)
    pos_score = (node_emb[src] * node_emb[dst]).sum(-1)
    neg_score = (node_emb[src] * node_emb[neg]).sum(-1)
    loss = F.softplus(-pos_score).mean() + F.softplus(neg_score).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(step, round(loss.item(), 4))
