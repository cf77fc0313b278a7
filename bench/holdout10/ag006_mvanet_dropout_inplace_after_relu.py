# source: https://github.com/qianyu-dlut/MVANet/issues/2
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""MVANet: the model's `__init__` ends by setting `m.inplace = True` on every `nn.ReLU` and `nn.Dropout`. Inside the
multi-view attention block the feed-forward is `dropout(activation(linear1(x)))` with `activation = F.relu`, so the now
in-place Dropout rewrites the ReLU output that ReLU's backward saved (`output 0 of ReluBackward0`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_activation_fn(activation):
    """Return an activation function given a string"""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if activation == "glu":
        return F.glu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}.")


def make_cbr(in_dim, out_dim):
    return nn.Sequential(nn.Conv2d(in_dim, out_dim, kernel_size=3, padding=1), nn.BatchNorm2d(out_dim), nn.ReLU())


class MCLM(nn.Module):
    """Multi-view complementary localisation: the global view attends to the local patches."""

    def __init__(self, d_model, num_heads):
        super(MCLM, self).__init__()
        self.attention = nn.MultiheadAttention(d_model, num_heads, dropout=0.1)
        self.linear1 = nn.Linear(d_model, d_model * 2)
        self.linear2 = nn.Linear(d_model * 2, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(0.1)
        self.dropout1 = nn.Dropout(0.1)
        self.dropout2 = nn.Dropout(0.1)
        self.activation = get_activation_fn('relu')

    def forward(self, glb, loc):
        b, c, h, w = glb.shape
        q = glb.flatten(2).permute(2, 0, 1)  # (hw, b, c)
        kv = loc.flatten(2).permute(2, 0, 1)
        q = q + self.dropout1(self.attention(q, kv, kv)[0])
        q = self.norm1(q)
        q = self.norm2(q + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(q))))))
        return q.permute(1, 2, 0).reshape(b, c, h, w)


class MVANet(nn.Module):
    def __init__(self, emb_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(make_cbr(3, emb_dim), nn.MaxPool2d(2), make_cbr(emb_dim, emb_dim))
        self.mclm = MCLM(emb_dim, 2)
        self.dec = make_cbr(emb_dim, emb_dim)
        self.output = nn.Conv2d(emb_dim, 1, kernel_size=1)
        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True  # expect: AG006

    def forward(self, x):
        glb = F.interpolate(x, scale_factor=0.5, mode='bilinear', align_corners=False)
        loc = x[..., : x.shape[-2] // 2, : x.shape[-1] // 2]
        glb_feat = self.backbone(glb)
        loc_feat = self.backbone(loc)
        fused = self.mclm(glb_feat, loc_feat)
        out = self.output(self.dec(fused))
        return F.interpolate(out, size=x.shape[-2:], mode='bilinear', align_corners=False)


def structure_loss(pred, mask):
    bce = F.binary_cross_entropy_with_logits(pred, mask)
    pred = torch.sigmoid(pred)
    inter = (pred * mask).sum(dim=(2, 3))
    union = (pred + mask).sum(dim=(2, 3))
    iou = 1 - (inter + 1) / (union - inter + 1)
    return bce + iou.mean()


images = torch.rand(8, 3, 32, 32)
gts = (torch.rand(8, 1, 32, 32) > 0.5).float()
train_loader = [(images[i:i + 4], gts[i:i + 4]) for i in range(0, 8, 4)]

generator = MVANet()
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-4)
generator.train()
for epoch in range(2):
    for step, (image, gt) in enumerate(train_loader):
        optimizer.zero_grad()
        sideout = generator(image)
        loss = structure_loss(sideout, gt)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
