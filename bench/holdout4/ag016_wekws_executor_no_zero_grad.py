# source: https://github.com/wenet-e2e/wekws/pull/73
# symptom: gradients accumulated across steps: True
# wekws kws/utils/executor.py: Executor.train runs forward, the max-pooling keyword loss, loss.backward(), gradient
# clipping and optimizer.step() for every batch, but never calls optimizer.zero_grad(), so every step applies the sum
# of all gradients so far ("when optimizer.step() is called, optimizer.zero_grad() is not called").
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_


class KWSModel(nn.Module):
    def __init__(self, idim=10, hdim=16, num_keywords=2):
        super().__init__()
        self.backbone = nn.GRU(idim, hdim, batch_first=True)
        self.classifier = nn.Linear(hdim, num_keywords)

    def forward(self, feats):
        hidden, _ = self.backbone(feats)
        return torch.sigmoid(self.classifier(hidden)), None


def max_pooling_loss(logits, target, lengths):
    """Keyword utterances: push the frame maximum up; filler utterances: push every frame down."""
    loss = 0.0
    for i in range(logits.size(0)):
        prob = logits[i, : lengths[i]]
        if target[i] >= 0:
            loss = loss - torch.log(prob[:, target[i]].max() + 1e-8)
        else:
            loss = loss - torch.log(1 - prob + 1e-8).mean()
    return loss / logits.size(0)


class Executor:
    def __init__(self):
        self.step = 0
        self.grads = []

    def train(self, model, optimizer, data_loader, args):
        model.train()
        clip = args.get("grad_clip", 50.0)
        for batch_idx, batch in enumerate(data_loader):
            key, feats, target, feats_lengths = batch
            num_utts = feats_lengths.size(0)
            if num_utts == 0:
                continue
            logits, _ = model(feats)
            loss = max_pooling_loss(logits, target, feats_lengths)
            loss.backward()
            self.grads.append(model.classifier.weight.grad.clone())
            grad_norm = clip_grad_norm_(model.parameters(), clip)
            if torch.isfinite(grad_norm):
                optimizer.step()  # expect: AG016
            self.step += 1


torch.manual_seed(0)
model = KWSModel()
# lr 0: the steps leave the weights unchanged, so the same batch gives the same gradient each time
optimizer = torch.optim.Adam(model.parameters(), lr=0.0)
batch = (["utt1", "utt2", "utt3"], torch.randn(3, 12, 10), torch.tensor([0, -1, 1]), torch.tensor([12, 9, 7]))
executor = Executor()
executor.train(model, optimizer, [batch, batch, batch], {"grad_clip": 50.0})
g = executor.grads
print("gradients accumulated across steps:", bool(torch.allclose(g[2], 3 * g[0], atol=1e-6)))
