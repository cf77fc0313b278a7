import torch


def _take_channels(*xs, ignore_channels=None):
    if ignore_channels is None:
        return xs
    channels = [c for c in range(xs[0].shape[1]) if c not in ignore_channels]
    index = torch.tensor(channels, device=xs[0].device)
    return [torch.index_select(x, dim=1, index=index) for x in xs]


def _threshold(x, threshold=None):
    if threshold is not None:
        return (x > threshold).type(x.dtype)
    return x


def f_score(pr, gt, beta=1, eps=1e-7, threshold=None, ignore_channels=None):
    pr = _threshold(pr, threshold=threshold)
    pr, gt = _take_channels(pr, gt, ignore_channels=ignore_channels)
    tp = torch.sum(gt * pr)
    fp = torch.sum(pr) - tp
    fn = torch.sum(gt) - tp
    return ((1 + beta ** 2) * tp + eps) / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp + eps)
