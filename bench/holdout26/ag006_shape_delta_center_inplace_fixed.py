# source: https://github.com/kywind/self-corr-pose/issues/5 (pattern: shape predictor centres its predicted per-vertex deltas in place with -= mean, overwriting a tensor autograd saved; the reporter fixed it with an out-of-place subtraction)
# symptom: modified by an inplace operation
"""Category-level shape predictor: deform a template mesh by bounded per-vertex deltas, trained with a trainer loop.

Fixed: the deltas are centred out of place (`shape_delta = shape_delta - shape_delta.mean(...)`).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
N_VERTS = 50


class ShapePredictor(nn.Module):
    def __init__(self, feat_dim=32, n_verts=N_VERTS):
        super().__init__()
        self.n_verts = n_verts
        self.fc = nn.Sequential(nn.Linear(feat_dim, 64), nn.ReLU(), nn.Linear(64, n_verts * 3))
        self.register_buffer("template", torch.randn(n_verts, 3))

    def forward(self, feat):
        b = feat.shape[0]
        shape_delta = torch.tanh(self.fc(feat)).view(b, self.n_verts, 3)
        shape_delta = shape_delta - shape_delta.mean(1, keepdim=True)
        return self.template.unsqueeze(0) + 0.1 * shape_delta


class Trainer:
    def __init__(self):
        self.model = ShapePredictor()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, steps=3):
        for it in range(steps):
            feat = torch.randn(4, 32)
            target = torch.randn(4, N_VERTS, 3)
            verts = self.model(feat)
            total_loss = ((verts - target) ** 2).sum(-1)
            self.optimizer.zero_grad()
            total_loss.mean().backward()
            self.optimizer.step()
            print(f"iter {it} loss {total_loss.mean().item():.4f}")


Trainer().train()
