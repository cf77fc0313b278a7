# source: written for bench/holdout17 from RULES.md AG003 (multi-task tabular model: shared trunk features computed once per batch, each head backward with retain_graph and stepped inside the inner loop)
# symptom: modified by an inplace operation
"""House-price / days-on-market / sold-flag multi-task MLP on random tabular data."""
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args([])

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
heads = nn.ModuleDict({"price": nn.Linear(32, 1), "days": nn.Linear(32, 1), "sold": nn.Linear(32, 1)})
losses = {"price": nn.MSELoss(), "days": nn.L1Loss(), "sold": nn.BCEWithLogitsLoss()}
opt = torch.optim.Adam(list(trunk.parameters()) + list(heads.parameters()), lr=args.lr)

X = torch.randn(128, 10)
Y = {"price": torch.randn(128, 1), "days": torch.rand(128, 1) * 30, "sold": (torch.rand(128, 1) > 0.5).float()}

for epoch in range(args.epochs):
    for i in range(0, 128, 32):
        feats = trunk(X[i:i + 32])
        opt.zero_grad()
        loss = sum(losses[name](head(feats), Y[name][i:i + 32]) for name, head in heads.items())
        loss.backward()
        opt.step()
    print("epoch", epoch, "done")
