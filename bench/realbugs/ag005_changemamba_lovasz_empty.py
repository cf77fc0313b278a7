# source: https://github.com/ChenHongruixuan/ChangeMamba/issues/26
# symptom: grad can be implicitly created only for scalar outputs
# Training MambaSCD on the reporter's own semantic-change data set: on a batch whose labels are all background
# (class 0, the ignored class of the Lovasz term) lovasz_softmax has no pixel left and returns `probas * 0.` of shape
# [0, C]; the total loss ce + 0.75 * lovasz broadcasts to that empty non-scalar tensor and backward raises (the
# reporter removed the Lovasz loss). Re-created with a Lovasz-softmax in the usual (Berman et al.) form and a tiny
# change-detection network.
import torch
import torch.nn as nn
import torch.nn.functional as F


def lovasz_grad(gt_sorted):
    gts = gt_sorted.sum()
    intersection = gts - gt_sorted.float().cumsum(0)
    union = gts + (1 - gt_sorted).float().cumsum(0)
    jaccard = 1.0 - intersection / union
    jaccard[1:] = jaccard[1:] - jaccard[:-1]
    return jaccard


def flatten_probas(probas, labels, ignore=None):
    B, C, H, W = probas.size()
    probas = probas.permute(0, 2, 3, 1).contiguous().view(-1, C)
    labels = labels.view(-1)
    if ignore is None:
        return probas, labels
    valid = labels != ignore
    return probas[valid.nonzero().squeeze(1)], labels[valid]


def lovasz_softmax_flat(probas, labels, classes="present"):
    if probas.numel() == 0:
        # only void pixels, the gradients should be 0
        return probas * 0.0
    C = probas.size(1)
    losses = []
    for c in range(C):
        fg = (labels == c).float()
        if classes == "present" and fg.sum() == 0:
            continue
        errors = (fg - probas[:, c]).abs()
        errors_sorted, perm = torch.sort(errors, 0, descending=True)
        losses.append(torch.dot(errors_sorted, lovasz_grad(fg[perm])))
    return torch.stack(losses).mean()


def lovasz_softmax(probas, labels, classes="present", ignore=None):
    return lovasz_softmax_flat(*flatten_probas(probas, labels, ignore), classes=classes)


class TinySCD(nn.Module):
    def __init__(self, num_classes=7):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.head_t1 = nn.Conv2d(16, num_classes, 1)
        self.head_t2 = nn.Conv2d(16, num_classes, 1)

    def forward(self, pre, post):
        f = torch.cat([self.encoder(pre), self.encoder(post)], dim=1)
        return self.head_t1(f), self.head_t2(f)


torch.manual_seed(0)
model = TinySCD()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
pre, post = torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)
label_t1 = torch.zeros(2, 16, 16, dtype=torch.long)  # an all-background tile
label_t2 = torch.zeros(2, 16, 16, dtype=torch.long)

optimizer.zero_grad()
out_t1, out_t2 = model(pre, post)
ce_loss = F.cross_entropy(out_t1, label_t1) + F.cross_entropy(out_t2, label_t2)
lovasz_loss = lovasz_softmax(F.softmax(out_t1, dim=1), label_t1, ignore=0) + lovasz_softmax(
    F.softmax(out_t2, dim=1), label_t2, ignore=0
)
final_loss = ce_loss + 0.75 * lovasz_loss
final_loss.backward()  # expect: AG005
optimizer.step()
