# source: written for holdout28 (pattern: matrix-factorisation recommender trains on a hit-rate@k loss built from topk indices and an equality test, which carries no gradient)
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
"""Matrix-factorisation recommender trained directly on the metric we report.

For each user, we want the held-out item to appear in the top-k scores.
"""
import torch
import torch.nn as nn


class MF(nn.Module):
    def __init__(self, n_users=50, n_items=80, dim=16):
        super().__init__()
        self.users = nn.Embedding(n_users, dim)
        self.items = nn.Embedding(n_items, dim)

    def scores(self, user_ids):
        return self.users(user_ids) @ self.items.weight.t()


def hit_rate_loss(scores, target_items, k=10):
    topk = scores.topk(k, dim=1).indices
    hits = (topk == target_items[:, None]).any(dim=1).float()
    return 1.0 - hits.mean()


def make_interactions(n_users=50, n_items=80):
    taste = torch.randn(n_users, 4)
    flavour = torch.randn(n_items, 4)
    return (taste @ flavour.t()).argmax(dim=1)


def main():
    torch.manual_seed(0)
    favourite = make_interactions()
    model = MF()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for epoch in range(5):
        perm = torch.randperm(50)
        for i in range(0, 50, 10):
            users = perm[i:i + 10]
            loss = hit_rate_loss(model.scores(users), favourite[users])
            opt.zero_grad()
            loss.backward()  # expect: AG010
            opt.step()
        print(f"epoch {epoch} 1-HR@10 {loss.item():.3f}")


if __name__ == "__main__":
    main()
