# source: https://github.com/ajhamdi/MVTN/commit/4c5da6b0944d3ec85efeca8845ed4403d7719ead
# symptom: total_loss keeps the graph of every batch: True
"""MVTN run_mvtn.py train() after the commit "fixed memory leakage issue #2": the epoch loss is summed
with `total_loss += loss.item()`, a Python float, so no batch's graph outlives its step."""
import math

import torch
import torch.nn as nn


class MVTN(nn.Module):
    """Stand-in view selector: predicts azimuth/elevation/distance offsets from the point cloud."""

    def __init__(self, nb_views):
        super().__init__()
        self.nb_views = nb_views
        self.point_net = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 32))
        self.head = nn.Linear(32, 3 * nb_views)

    def forward(self, points, c_batch_size):
        feat = self.point_net(points).max(1)[0]
        off = torch.tanh(self.head(feat)).view(c_batch_size, 3, self.nb_views)
        base = torch.linspace(0, 360, self.nb_views + 1)[:-1]
        return base + 30 * off[:, 0], 30 * off[:, 1], 2.0 + 0.5 * off[:, 2]


class MVRenderer(nn.Module):
    """Stand-in differentiable renderer: splats rotated points into a small image per view."""

    def __init__(self, nb_views, image_size):
        super().__init__()
        self.nb_views = nb_views
        self.image_size = image_size

    def forward(self, points, azim, elev, dist):
        a = azim * math.pi / 180
        e = elev * math.pi / 180
        x = points[:, None, :, 0] * torch.cos(a)[..., None] - points[:, None, :, 2] * torch.sin(a)[..., None]
        y = points[:, None, :, 1] * torch.cos(e)[..., None] + points[:, None, :, 2] * torch.sin(e)[..., None]
        grid = torch.linspace(-1, 1, self.image_size)
        img = torch.exp(-((x[..., None, None] - grid[None, :]) ** 2 + (y[..., None, None] - grid[:, None]) ** 2)
                        * 20 / dist[..., None, None, None]).sum(2)
        return img.unsqueeze(2), None


class MVCNN(nn.Module):
    def __init__(self, nb_classes, nb_views):
        super().__init__()
        self.nb_views = nb_views
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.classifier = nn.Linear(8 * 16, nb_classes)

    def forward(self, views):
        b = views.shape[0]
        f = self.features(views.flatten(0, 1)).view(b, self.nb_views, -1).max(1)[0]
        return self.classifier(f), f


def regualarize_rendered_views(rendered_images, view_reg, augment_training, crop_ratio):
    return rendered_images / (rendered_images.amax(dim=(-1, -2), keepdim=True) + 1e-6)


torch.manual_seed(0)
setup = {"nb_views": 4, "image_size": 16, "is_learning_views": True, "print_freq": 5, "view_reg": 0.0,
         "augment_training": False, "crop_ratio": 0.3}
criterion = nn.CrossEntropyLoss()
mvnetwork = MVCNN(5, setup["nb_views"])
mvtn = MVTN(setup["nb_views"])
mvrenderer = MVRenderer(setup["nb_views"], setup["image_size"])
optimizer = torch.optim.AdamW(mvnetwork.parameters(), lr=1e-3)
mvtn_optimizer = torch.optim.AdamW(mvtn.parameters(), lr=1e-4)
models_bag = {"mvnetwork": mvnetwork, "optimizer": optimizer, "mvtn": mvtn, "mvtn_optimizer": mvtn_optimizer,
              "mvrenderer": mvrenderer}


def make_loader(n_batches, batch_size):
    g = torch.Generator().manual_seed(1)
    return [(torch.randint(0, 5, (batch_size,), generator=g), None, torch.randn(batch_size, 64, 3, generator=g))
            for _ in range(n_batches)]


def train(data_loader, models_bag, setup):
    train_size = len(data_loader)
    total = 0.0
    correct = 0.0
    total_loss = 0.0
    n = 0
    for i, (targets, meshes, points) in enumerate(data_loader):
        c_batch_size = targets.shape[0]
        models_bag["optimizer"].zero_grad()
        if setup["is_learning_views"]:
            models_bag["mvtn_optimizer"].zero_grad()
        azim, elev, dist = models_bag["mvtn"](points, c_batch_size=c_batch_size)
        rendered_images, _ = models_bag["mvrenderer"](points, azim=azim, elev=elev, dist=dist)
        rendered_images = regualarize_rendered_views(
            rendered_images, setup["view_reg"], setup["augment_training"], setup["crop_ratio"])
        outputs = models_bag["mvnetwork"](rendered_images)[0]
        loss = criterion(outputs, targets)
        _, predicted = torch.max(outputs.data, 1)
        total += targets.size(0)
        loss.backward()
        models_bag["optimizer"].step()
        if setup["is_learning_views"]:
            models_bag["mvtn_optimizer"].step()
        if (i + 1) % setup["print_freq"] == 0:
            print("\tIter [%d/%d] Loss: %.4f" % (i + 1, train_size, loss.item()))
        correct += (predicted == targets).sum()
        total_loss += loss.item()
        n += 1
    avg_loss = total_loss / n
    avg_train_acc = 100 * correct / total
    return avg_train_acc, avg_loss


def main():
    loader = make_loader(10, 6)
    for epoch in range(2):
        avg_train_acc, avg_loss = train(loader, models_bag, setup)
        print("epoch", epoch, "acc %.1f" % float(avg_train_acc), "loss %.4f" % float(avg_loss))
    keeps = isinstance(avg_loss, torch.Tensor) and avg_loss.grad_fn is not None
    print(f"total_loss keeps the graph of every batch: {keeps}")


if __name__ == "__main__":
    main()
