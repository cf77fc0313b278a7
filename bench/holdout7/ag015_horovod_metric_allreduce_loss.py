# source: https://github.com/horovod/horovod/pull/641
# symptom: train_loss.sum keeps the graph of every step: True
"""horovod `examples/pytorch_imagenet_resnet50.py`: `train(epoch)` calls `train_loss.update(loss)` with the
undetached loss every step, and `Metric.update` accumulates `self.sum += hvd.allreduce(val.cpu(), ...)`, so the
running sum holds the autograd graph of every batch of the epoch (the memory leak of the pull request)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class hvd:
    """Single-process stand-in for horovod.torch: allreduce averages over one worker (and is differentiable)."""

    @staticmethod
    def size():
        return 1

    @staticmethod
    def allreduce(tensor, name=None):
        return tensor * (1.0 / hvd.size())


class Args:
    batch_size = 4
    batches_per_allreduce = 1
    base_lr = 0.0125
    momentum = 0.9
    wd = 0.00005
    epochs = 1


args = Args()
allreduce_batch_size = args.batch_size * args.batches_per_allreduce
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr * hvd.size(), momentum=args.momentum,
                            weight_decay=args.wd)
train_loader = [(torch.randn(allreduce_batch_size, 3, 16, 16), torch.randint(0, 10, (allreduce_batch_size,)))
                for _ in range(4)]


# Horovod: average metrics from distributed training.
class Metric(object):
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.)
        self.n = torch.tensor(0.)

    def update(self, val):
        self.sum += hvd.allreduce(val.cpu(), name=self.name)  # expect: AG015
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


def accuracy(output, target):
    # get the index of the max log-probability
    pred = output.max(1, keepdim=True)[1]
    return pred.eq(target.view_as(pred)).cpu().float().mean()


def train(epoch):
    model.train()
    train_loss = Metric('train_loss')
    train_accuracy = Metric('train_accuracy')
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        for i in range(0, allreduce_batch_size, args.batch_size):
            data_step = data[i:i + args.batch_size]
            target_step = target[i:i + args.batch_size]
            output = model(data_step)
            train_accuracy.update(accuracy(output, target_step))
            loss = F.cross_entropy(output, target_step)
            train_loss.update(loss)  # expect: AG015
            # Average gradients among sub-batches
            loss.div_(allreduce_batch_size / args.batch_size)
            loss.backward()
        optimizer.step()
    print(f"epoch {epoch + 1} | loss {train_loss.avg.item():.4f} | accuracy {100. * train_accuracy.avg.item():.1f}")
    return train_loss


for epoch in range(args.epochs):
    train_loss = train(epoch)
print(f"train_loss.sum keeps the graph of every step: {train_loss.sum.grad_fn is not None}")
