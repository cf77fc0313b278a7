# source: https://github.com/wutong16/DistributionBalancedLoss/issues/20
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# ResampleLoss's logit regularisation adds the init bias in place (logits += self.init_bias); the user's classifier
# head already applies a sigmoid, so the add overwrites the (64, 109) output that SigmoidBackward0 saved and
# loss.backward() fails ("output 0 of SigmoidBackward0, is at version 1; expected version 0").
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResampleLoss(nn.Module):
    def __init__(self, logit_reg=None, class_freq=None):
        super().__init__()
        self.logit_reg = logit_reg or {"init_bias": 0.05, "neg_scale": 2.0}
        self.neg_scale = self.logit_reg["neg_scale"]
        freq = class_freq if class_freq is not None else torch.ones(7)
        self.init_bias = -torch.log(freq.sum() / freq - 1) * self.logit_reg["init_bias"]

    def logit_reg_functions(self, labels, logits, weight=None):
        if "init_bias" in self.logit_reg:
            logits += self.init_bias  # expect: AG006
        if "neg_scale" in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def forward(self, cls_score, label):
        weight = torch.ones_like(label)
        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)
        return F.binary_cross_entropy_with_logits(cls_score, label.float(), weight=weight)


class Classifier(nn.Module):
    def __init__(self, feat=12, num_classes=7):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(feat, 16), nn.ReLU())
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return torch.sigmoid(self.fc(self.backbone(x)))


torch.manual_seed(0)
model = Classifier()
criterion = ResampleLoss(class_freq=torch.tensor([50.0, 20.0, 10.0, 8.0, 5.0, 3.0, 1.0]))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(2):
    x, labels = torch.randn(8, 12), (torch.rand(8, 7) > 0.7)
    optimizer.zero_grad()
    loss = criterion(model(x), labels)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
