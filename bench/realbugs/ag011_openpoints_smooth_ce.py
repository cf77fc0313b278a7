# source: https://github.com/guochengqian/openpoints/pull/17
# symptom: UserWarning: torch\.range is deprecated
# SmoothCrossEntropy.__init__ (with ignore_index) builds its label-reducing list with torch.range(0, num_classes),
# relying on the inclusive end; constructing the loss at the start of every run emits the deprecation warning.
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class SmoothCrossEntropy(torch.nn.Module):
    def __init__(self, label_smoothing=0.2, ignore_index=None, num_classes=None, weight=None, return_valid=False):
        super(SmoothCrossEntropy, self).__init__()
        self.label_smoothing = label_smoothing
        self.ignore_index = ignore_index
        self.return_valid = return_valid
        # Reduce label values in the range of logit shape
        if ignore_index is not None:
            reducing_list = torch.range(0, num_classes).long()  # expect: AG011
            inserted_value = torch.zeros((1, )).long()
            self.reducing_list = torch.cat([reducing_list[:ignore_index], inserted_value, reducing_list[ignore_index:]], 0)
        self.weight = weight

    def forward(self, pred, gt):
        gt = gt.contiguous().view(-1)
        if self.ignore_index is not None:
            valid_idx = gt != self.ignore_index
            pred = pred[valid_idx, :]
            gt = gt[valid_idx]
            gt = torch.gather(self.reducing_list, 0, gt)
        n_class = pred.size(1)
        one_hot = torch.zeros_like(pred).scatter(1, gt.view(-1, 1), 1)
        one_hot = one_hot * (1 - self.label_smoothing) + (1 - one_hot) * self.label_smoothing / (n_class - 1)
        log_prb = F.log_softmax(pred, dim=1)
        return -(one_hot * log_prb).sum(dim=1).mean()


def build_criterion_from_cfg(cfg):
    return SmoothCrossEntropy(**cfg)


criterion = build_criterion_from_cfg(dict(label_smoothing=0.2, ignore_index=2, num_classes=4))
logits = torch.randn(10, 4, requires_grad=True)
labels = torch.randint(0, 5, (10,))
loss = criterion(logits, labels)
loss.backward()
print("reducing list", criterion.reducing_list.tolist(), "loss", loss.item())
