# source: written for bench/holdout16 from RULES.md AG001 (plain-script non-negative matrix factorisation, projection after the optimizer step)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Non-negative matrix factorisation of a user x item rating matrix with Adam and a projection step
(fixed: the projection runs under torch.no_grad())."""
import torch

torch.manual_seed(0)
n_users, n_items, rank = 30, 20, 4
ratings = torch.rand(n_users, rank) @ torch.rand(rank, n_items)
observed = torch.rand(n_users, n_items) < 0.6

user_f = torch.rand(n_users, rank, requires_grad=True)
item_f = torch.rand(rank, n_items, requires_grad=True)
opt = torch.optim.Adam([user_f, item_f], lr=0.05)

for epoch in range(20):
    opt.zero_grad()
    pred = user_f @ item_f
    loss = ((pred - ratings)[observed] ** 2).mean()
    loss.backward()
    opt.step()
    # keep the factors non-negative
    with torch.no_grad():
        user_f.clamp_(min=0.0)
        item_f.clamp_(min=0.0)
    if epoch % 5 == 0:
        print(f"epoch {epoch} mse {loss.item():.4f}")
