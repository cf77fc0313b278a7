# source: https://github.com/bubbliiiing/yolo3-pytorch/issues/3
# symptom: total_loss keeps the graph of every iteration: True
"""bubbliiiing/yolo3-pytorch train.py: fit_ont_epoch() sums the training loss with `total_loss += loss`
(the pre-0.4 idiom), so total_loss chains the autograd graph of every iteration of the epoch and the GPU
memory grows until it runs out with larger epochs.

Written for bench/holdout8 with the structure of the repository's train.py (fit_ont_epoch over a
generator, three YOLOLoss heads, a frozen-backbone phase then an unfrozen phase); the Darknet body is a
small conv net and the images are random 32x32 tensors.
"""
import time

import torch
import torch.nn as nn
import torch.optim as optim


Config = {"yolo": {"anchors": [[1, 1], [2, 2], [3, 3]], "classes": 2}, "img_h": 32, "img_w": 32}


class YoloBody(nn.Module):
    def __init__(self, config):
        super().__init__()
        out_ch = 3 * (5 + config["yolo"]["classes"])
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1),
                                      nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.LeakyReLU(0.1))
        self.last_layer0 = nn.Conv2d(16, out_ch, 1)
        self.last_layer1 = nn.Conv2d(16, out_ch, 1)
        self.last_layer2 = nn.Conv2d(16, out_ch, 1)

    def forward(self, x):
        f = self.backbone(x)
        return self.last_layer0(f), self.last_layer1(f), self.last_layer2(f)


class YOLOLoss(nn.Module):
    def __init__(self, anchors, num_classes, img_size, cuda):
        super().__init__()
        self.anchors = anchors
        self.num_anchors = len(anchors)
        self.num_classes = num_classes
        self.bbox_attrs = 5 + num_classes
        self.img_size = img_size
        self.cuda = cuda

    def forward(self, input, targets):
        bs, _, in_h, in_w = input.shape
        prediction = input.view(bs, self.num_anchors, self.bbox_attrs, in_h, in_w).permute(0, 1, 3, 4, 2)
        conf = torch.sigmoid(prediction[..., 4])
        xy = torch.sigmoid(prediction[..., :2])
        mask = torch.zeros(bs, self.num_anchors, in_h, in_w)
        txy = torch.zeros(bs, self.num_anchors, in_h, in_w, 2)
        for b, boxes in enumerate(targets):
            for box in boxes:
                gi, gj = int(box[0] * in_w), int(box[1] * in_h)
                mask[b, 0, gj, gi] = 1
                txy[b, 0, gj, gi] = torch.stack([box[0] * in_w - gi, box[1] * in_h - gj])
        loss_conf = nn.functional.binary_cross_entropy(conf, mask)
        loss_xy = ((xy - txy) ** 2 * mask.unsqueeze(-1)).sum() / bs
        return loss_conf + loss_xy, mask.sum()


def get_lr(optimizer):
    for param_group in optimizer.param_groups:
        return param_group["lr"]


def generator(batch_size, n_batches):
    for _ in range(n_batches):
        images = torch.rand(batch_size, 3, Config["img_h"], Config["img_w"])
        targets = [torch.rand(2, 4) * 0.9 for _ in range(batch_size)]
        yield images, targets


def fit_ont_epoch(net, yolo_losses, optimizer, epoch, epoch_size, epoch_size_val, gen, genval, Epoch):
    total_loss = 0
    val_loss = 0
    start_time = time.time()
    for iteration, batch in enumerate(gen):
        if iteration >= epoch_size:
            break
        images, targets = batch[0], batch[1]
        optimizer.zero_grad()
        outputs = net(images)
        losses = []
        for i in range(3):
            loss_item = yolo_losses[i](outputs[i], targets)
            losses.append(loss_item[0])
        loss = sum(losses)
        loss.backward()
        optimizer.step()

        total_loss += loss  # expect: AG015
        waste_time = time.time() - start_time
        postfix = {"total_loss": float(total_loss) / (iteration + 1), "lr": get_lr(optimizer), "step/s": waste_time}
        start_time = time.time()
    net.eval()
    for iteration, batch in enumerate(genval):
        if iteration >= epoch_size_val:
            break
        images_val, targets_val = batch[0], batch[1]
        with torch.no_grad():
            outputs = net(images_val)
            losses = []
            for i in range(3):
                loss_item = yolo_losses[i](outputs[i], targets_val)
                losses.append(loss_item[0])
            loss = sum(losses)
            val_loss += loss
    net.train()
    print("Epoch:" + str(epoch + 1) + "/" + str(Epoch), postfix)
    print("Total Loss: %.4f || Val Loss: %.4f " % (total_loss / (epoch_size + 1), val_loss / (epoch_size_val + 1)))
    return total_loss


def main():
    torch.manual_seed(0)
    model = YoloBody(Config)
    net = model.train()
    yolo_losses = [YOLOLoss(Config["yolo"]["anchors"], Config["yolo"]["classes"], (Config["img_w"], Config["img_h"]), False)
                   for _ in range(3)]
    epoch_size, epoch_size_val, batch_size = 4, 1, 2

    lr, Init_Epoch, Freeze_Epoch = 1e-3, 0, 1
    optimizer = optim.Adam(net.parameters(), lr)
    lr_scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.95)
    for param in model.backbone.parameters():
        param.requires_grad = False
    for epoch in range(Init_Epoch, Freeze_Epoch):
        fit_ont_epoch(net, yolo_losses, optimizer, epoch, epoch_size, epoch_size_val,
                      generator(batch_size, epoch_size), generator(batch_size, epoch_size_val), Freeze_Epoch)
        lr_scheduler.step()

    lr, Unfreeze_Epoch = 1e-4, 2
    optimizer = optim.Adam(net.parameters(), lr)
    lr_scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.95)
    for param in model.backbone.parameters():
        param.requires_grad = True
    for epoch in range(Freeze_Epoch, Unfreeze_Epoch):
        total = fit_ont_epoch(net, yolo_losses, optimizer, epoch, epoch_size, epoch_size_val,
                              generator(batch_size, epoch_size), generator(batch_size, epoch_size_val), Unfreeze_Epoch)
        lr_scheduler.step()
    print("total_loss keeps the graph of every iteration:", isinstance(total, torch.Tensor) and total.grad_fn is not None)


if __name__ == "__main__":
    main()
