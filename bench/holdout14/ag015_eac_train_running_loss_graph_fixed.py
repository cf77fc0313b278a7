"""EAC's train() accumulating the epoch loss from detached values (clean twin).

In `src/main.py`, `train(args, model, train_loader, optimizer, scheduler, device)` backpropagates
`loss = loss1 + lam * flip_loss_l` and steps, then accumulates `running_loss += loss` (and the returned
epoch loss is `running_loss / iter_cnt`). Every batch's graph (two forward passes, the flip-consistency
loss on the attention maps) stays alive through the epoch: memory grows during training.

Clean twin: the fix the reporter gives, `loss = loss.detach().cpu()` after the step, so `running_loss` sums values
without their graphs.
"""
# source: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11
# symptom: running_loss keeps the graph of every batch: True
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Backbone -> 7x7 feature map -> class-activation heat maps and logits."""

    def __init__(self, num_classes=7):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(7),
        )
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        feat = self.features(x)
        output = self.fc(feat.mean(dim=(2, 3)))
        hm = torch.einsum("bchw,kc->bkhw", feat, self.fc.weight)
        return output, hm


def generate_flip_grid(w, h, device):
    x_ = torch.linspace(-1, 1, w, device=device).view(1, w).repeat(h, 1)
    y_ = torch.linspace(-1, 1, h, device=device).view(h, 1).repeat(1, w)
    grid = torch.stack([x_, y_], dim=-1).unsqueeze(0)
    grid[:, :, :, 0] = -grid[:, :, :, 0]
    return grid


def ACLoss(hm1, hm2, grid, output):
    flip_grid = grid.expand(hm2.shape[0], -1, -1, -1)
    hm2_flipped = F.grid_sample(hm2, flip_grid, mode="bilinear", padding_mode="border", align_corners=True)
    return F.mse_loss(hm1, hm2_flipped)


def train(args, model, train_loader, optimizer, scheduler, device):
    running_loss = 0.0
    iter_cnt = 0
    correct_sum = 0
    model.to(device)
    model.train()
    for batch_i, (imgs1, labels, indexes, imgs2) in enumerate(train_loader):
        imgs1, imgs2, labels = imgs1.to(device), imgs2.to(device), labels.to(device)
        output, hm1 = model(imgs1)
        output_flip, hm2 = model(imgs2)
        grid_l = generate_flip_grid(args["w"], args["h"], device)
        loss1 = nn.CrossEntropyLoss()(output, labels)
        flip_loss_l = ACLoss(hm1, hm2, grid_l, output)
        loss = loss1 + args["lam"] * flip_loss_l
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss = loss.detach().cpu()

        iter_cnt += 1
        _, predicts = torch.max(output, 1)
        correct_num = torch.eq(predicts, labels).sum()
        correct_sum += correct_num
        running_loss += loss

    scheduler.step()
    print(f"running_loss keeps the graph of every batch: {running_loss.grad_fn is not None}")
    running_loss = running_loss / iter_cnt
    acc = correct_sum.float() / float(len(train_loader) * train_loader[0][0].shape[0])
    return acc, running_loss


def make_loader(n_batches=4, batch=8):
    loader = []
    for i in range(n_batches):
        imgs1 = torch.randn(batch, 3, 28, 28)
        loader.append((imgs1, torch.randint(0, 7, (batch,)), torch.arange(batch), torch.flip(imgs1, dims=[3])))
    return loader


def main():
    torch.manual_seed(0)
    args = {"w": 7, "h": 7, "lam": 5.0}
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
    for epoch in range(1, 3):
        train_acc, train_loss = train(args, model, make_loader(), optimizer, scheduler, torch.device("cpu"))
        print(f"epoch {epoch} acc {train_acc.item():.3f} loss {float(train_loss):.4f}")


if __name__ == "__main__":
    main()
