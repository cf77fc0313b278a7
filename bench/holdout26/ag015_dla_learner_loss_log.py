# source: https://github.com/ULTR-Community/ULTRA_pytorch/issues/6 (pattern: unbiased learning-to-rank learner (DLA) keeps summing self.loss tensors into a logging total across update steps, so every step's graph stays alive and CPU memory is used up; fix is self.loss.item())
# symptom: loss keeps graph of every batch: True
"""DLA-style learner: a ranking model and a propensity model trained jointly, with a running loss for logging."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DLA:
    def __init__(self, feature_size=12, rank_list_size=6, lr=0.05):
        self.rank_list_size = rank_list_size
        self.model = nn.Sequential(nn.Linear(feature_size, 16), nn.ELU(), nn.Linear(16, 1))
        self.propensity_model = nn.Linear(rank_list_size, rank_list_size)
        params = list(self.model.parameters()) + list(self.propensity_model.parameters())
        self.optimizer = torch.optim.Adagrad(params, lr=lr)
        self.global_step = 0
        self.loss_sum = 0.0

    def ranking_scores(self, features):
        return self.model(features).squeeze(-1)

    def update(self, features, clicks):
        train_output = self.ranking_scores(features)
        propensity = self.propensity_model(torch.eye(self.rank_list_size)).sum(0, keepdim=True)
        rank_loss = F.binary_cross_entropy_with_logits(train_output, clicks)
        exam_loss = F.binary_cross_entropy_with_logits(propensity.expand_as(clicks), clicks)
        self.loss = rank_loss + exam_loss
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()
        self.loss_sum += self.loss  # expect: AG015
        self.global_step += 1
        return self.loss.item()


learner = DLA()
for step in range(20):
    features = torch.randn(8, 6, 12)
    clicks = (torch.rand(8, 6) < 0.3).float()
    learner.update(features, clicks)
print(f"average loss {float(learner.loss_sum) / learner.global_step:.4f}")
print("loss keeps graph of every batch:", getattr(learner.loss_sum, "grad_fn", None) is not None)
