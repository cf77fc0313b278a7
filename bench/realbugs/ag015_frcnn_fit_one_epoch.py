# source: https://github.com/bubbliiiing/faster-rcnn-pytorch/issues/35
# symptom: total_loss still has a graph: True
# fit_one_epoch adds the loss tensors returned by FasterRCNNTrainer.train_step straight into its running sums
# (total_loss += total, rpn_loc_loss += rpn_loc, ...) for the progress bar; memory keeps growing (report: use .item()).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def graph_size(t):
    seen, stack = set(), [getattr(t, "grad_fn", None)]
    while stack:
        f = stack.pop()
        if f is not None and f not in seen:
            seen.add(f)
            stack.extend(g for g, _ in f.next_functions)
    return len(seen)


class FasterRCNN(nn.Module):
    def __init__(self, num_classes=3, n_anchors=6):
        super().__init__()
        self.extractor = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.rpn_loc = nn.Linear(32, n_anchors * 4)
        self.rpn_score = nn.Linear(32, n_anchors * 2)
        self.roi_loc = nn.Linear(32, num_classes * 4)
        self.roi_score = nn.Linear(32, num_classes)

    def forward(self, imgs):
        f = self.extractor(imgs)
        return self.rpn_loc(f), self.rpn_score(f), self.roi_loc(f), self.roi_score(f)


class FasterRCNNTrainer(nn.Module):
    def __init__(self, faster_rcnn, optimizer):
        super().__init__()
        self.faster_rcnn = faster_rcnn
        self.optimizer = optimizer

    def forward(self, imgs, bboxes, labels, scale):
        rpn_locs, rpn_scores, roi_locs, roi_scores = self.faster_rcnn(imgs)
        n = imgs.shape[0]
        rpn_loc_loss = F.smooth_l1_loss(rpn_locs, bboxes.repeat(1, rpn_locs.shape[1] // 4))
        rpn_cls_loss = F.cross_entropy(rpn_scores.view(n, 2, -1), (labels > 0).long().view(n, 1).expand(n, rpn_scores.shape[1] // 2))
        roi_loc_loss = F.smooth_l1_loss(roi_locs, bboxes.repeat(1, roi_locs.shape[1] // 4))
        roi_cls_loss = F.cross_entropy(roi_scores, labels)
        losses = [rpn_loc_loss, rpn_cls_loss, roi_loc_loss, roi_cls_loss]
        return losses + [sum(losses)]

    def train_step(self, imgs, bboxes, labels, scale):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, bboxes, labels, scale)
        losses[-1].backward()
        self.optimizer.step()
        return losses


def fit_one_epoch(net, epoch, epoch_size, gen, Epoch):
    train_util = FasterRCNNTrainer(net, optimizer)
    total_loss = 0
    rpn_loc_loss = 0
    rpn_cls_loss = 0
    roi_loc_loss = 0
    roi_cls_loss = 0
    for iteration, batch in enumerate(gen):
        if iteration >= epoch_size:
            break
        imgs, boxes, labels = batch[0], batch[1], batch[2]
        losses = train_util.train_step(imgs, boxes, labels, 1)
        rpn_loc, rpn_cls, roi_loc, roi_cls, total = losses
        total_loss += total  # expect: AG015
        rpn_loc_loss += rpn_loc  # expect: AG015
        rpn_cls_loss += rpn_cls  # expect: AG015
        roi_loc_loss += roi_loc  # expect: AG015
        roi_cls_loss += roi_cls  # expect: AG015
        print(f"Epoch {epoch + 1}/{Epoch} it {iteration}: total {total_loss.item() / (iteration + 1):.3f}")
    print("total_loss still has a graph:", total_loss.grad_fn is not None, "| nodes reachable:", graph_size(total_loss))


model = FasterRCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
gen = [(torch.rand(2, 3, 8, 8), torch.rand(2, 4), torch.randint(0, 3, (2,))) for _ in range(4)]
fit_one_epoch(model, 0, 4, gen, 1)
