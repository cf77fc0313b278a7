# source: https://github.com/MrChenFeng/Adaptive-Soft-Contrastive-Learning_ICPR2022/issues/2
# symptom: grad can be implicitly created only for scalar outputs
# ASCL wrapper with model='byol': the BYOL branch returns one loss per sample (2 - 2 * cosine, reduced over the
# feature dimension only), the MoCo branch returns a mean; the training loop calls loss.backward() on whatever the
# wrapper returns: "When using the byol model, the loss is not a scalar".
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelBase(nn.Module):
    def __init__(self, projection_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(1))
        self.projector = nn.Sequential(nn.Linear(8, 32), nn.ReLU(True), nn.Linear(32, projection_dim))

    def forward(self, x):
        return self.projector(self.net(x))


class ASCL(nn.Module):
    def __init__(self, model="moco", dim=16, m=0.99, T1=0.1, type="ascl"):
        super().__init__()
        self.model = model
        self.m = m
        self.T1 = T1
        self.type = type
        self.encoder_q = ModelBase(projection_dim=dim)
        self.encoder_k = ModelBase(projection_dim=dim)
        if self.model == "byol":
            self.predictor = nn.Sequential(nn.Linear(dim, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, dim))
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    def _forward_moco(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        logits = q @ k.t() / self.T1
        labels = torch.arange(q.shape[0])
        return F.cross_entropy(logits, labels)

    def _forward_byol(self, im_q, im_k):
        with torch.no_grad():
            self._momentum_update_key_encoder()
        q = self.encoder_q(im_q)
        k = self.encoder_k(im_k)
        hq = F.normalize(self.predictor(q), dim=-1, p=2)
        k = F.normalize(k, dim=-1, p=2)
        loss = 2 - 2 * (hq * k.detach()).sum(dim=-1)
        return loss

    def forward(self, im_q, im_k):
        if self.model == "byol":
            return self._forward_byol(im_q, im_k)
        if self.model == "moco":
            return self._forward_moco(im_q, im_k)
        raise ValueError(f"Wrong model! Should be moco or byol rather than {self.model}!")


def train(net, data_loader, train_optimizer, epoch):
    net.train()
    total_loss, total_num = 0.0, 0
    for im_1, im_2 in data_loader:
        loss = net(im_1, im_2)
        train_optimizer.zero_grad()
        loss.backward()  # expect: AG005
        train_optimizer.step()
        total_num += im_1.shape[0]
        total_loss += loss.item() * im_1.shape[0]
    print(f"epoch {epoch} loss {total_loss / total_num:.4f}")


torch.manual_seed(0)
model = ASCL(model="byol", type="hard")
optimizer = torch.optim.SGD(model.parameters(), lr=0.06, momentum=0.9, weight_decay=5e-4)
batches = [(torch.randn(8, 3, 12, 12), torch.randn(8, 3, 12, 12)) for _ in range(2)]
train(model, batches, optimizer, 1)
