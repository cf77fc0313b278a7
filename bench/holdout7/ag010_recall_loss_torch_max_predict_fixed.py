# source: https://github.com/shuaizzZ/Recall-Loss-PyTorch/issues/1
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
"""Twin (the author's fix in the thread: the recall is computed from the softmax probabilities `pt` instead of the
one-hot of `torch.max` indices). Recall-Loss-PyTorch `recall_loss.py`: `RecallLoss.forward` took `_, predict = torch.max(input, 1)` and scattered the
class indices into a one-hot tensor, so the recall (and the loss) was built from integer predictions only; training a
segmentation network with it failed at `loss.backward()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RecallLoss(nn.Module):
    """ An unofficial implementation of
        <Recall Loss for Imbalanced Image Classification and Semantic Segmentation>
        recall = TP / (TP + FN)
    Args:
        weight: An array of shape [C,]
        predict: A float32 tensor of shape [N, C, *], for Semantic segmentation task is [N, C, H, W]
        target: A int64 tensor of shape [N, *], for Semantic segmentation task is [N, H, W]
    """

    def __init__(self, weight=None):
        super(RecallLoss, self).__init__()
        if weight is not None:
            weight = torch.Tensor(weight)
            self.weight = weight / torch.sum(weight)  # Normalized weight
        self.smooth = 1e-5

    def forward(self, input, target):
        N, C = input.size()[:2]
        logpt = F.log_softmax(input, dim=1)
        pt = logpt.exp().view(N, C, -1)  # (N, C, *)

        ## convert target (N, 1, *) into one hot vector (N, C, *)
        target = target.view(N, 1, -1)  # (N, 1, *)
        target_onehot = torch.zeros(pt.size()).type_as(pt)  # (N, 1, *) ==> (N, C, *)
        target_onehot.scatter_(1, target, 1)  # (N, C, *)

        true_positive = torch.sum(pt * target_onehot, dim=2)  # (N, C)
        total_target = torch.sum(target_onehot, dim=2)  # (N, C)
        ## Recall = TP / (TP + FN)
        recall = (true_positive + self.smooth) / (total_target + self.smooth)  # (N, C)

        if hasattr(self, 'weight'):
            if self.weight.type() != input.type():
                self.weight = self.weight.type_as(input)
                recall = recall * self.weight * C  # (N, C)
        recall_loss = 1 - torch.mean(recall)  # 1

        return recall_loss


class SegNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, num_classes, 1))

    def forward(self, x):
        return self.body(x)


model = SegNet()
criterion = RecallLoss(weight=[1, 2, 4])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for it in range(2):
    image = torch.rand(2, 3, 16, 16)
    label = torch.randint(0, 3, (2, 16, 16))
    loss = criterion(model(image), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"iter {it} | recall loss {loss.item():.4f}")
