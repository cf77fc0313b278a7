# source: https://github.com/sauradip/STALE/issues/16
# symptom: Function '\w+Backward0' returned nan values
# The STALE model's __init__ creates self.bg_embeddings = nn.Parameter(torch.empty(1, 512)) and never initialises it;
# the cosine-similarity classifier divides by its norm and anomaly mode stops training on a NaN gradient (report: DivBackward0).
# (fill_uninitialized_memory makes the garbage deterministic: fresh memory reads NaN.)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True
torch.autograd.set_detect_anomaly(True)
torch.manual_seed(0)


class STALE(nn.Module):
    def __init__(self, num_classes=4, feat_dim=512, temporal_scale=8):
        super().__init__()
        self.txt_embeddings = nn.Parameter(torch.randn(num_classes, feat_dim) * 0.02)  # stands in for CLIP text features
        self.bg_embeddings = nn.Parameter(torch.empty(1, feat_dim))  # expect: AG012
        self.proj = nn.Conv1d(feat_dim, feat_dim, 1)
        self.temporal_scale = temporal_scale

    def compute_score_maps(self, visual, text):
        visual = visual / visual.norm(dim=1, keepdim=True)
        text = text / text.norm(dim=-1, keepdim=True)
        return torch.einsum("bdt,cd->bct", visual, text) / 0.07

    def forward(self, x):
        visual = self.proj(x)
        text = torch.cat([self.txt_embeddings, self.bg_embeddings], dim=0)
        return self.compute_score_maps(visual, text)


model = STALE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for step in range(2):
    feats = torch.randn(2, 512, 8)
    labels = torch.randint(0, 5, (2, 8))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(feats), labels)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
