# source: https://github.com/cwmok/DIRAC/issues/13
# symptom: loss_occ requires grad: False
"""DIRAC `BRATS_train_DIRAC.py`: bidirectional registration with an occlusion (tumour) mask from the forward/backward
inconsistency. The occlusion loss is the mean of the masks `(smo_norm_diff_fw > thresh_fw).float()`, built by a
comparison, so it carries no gradient: the "OCC" term of the total loss never trains anything."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RegNet(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv3d(2, ch, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv3d(ch, ch, 3, padding=1),
                                 nn.LeakyReLU(0.2))
        self.flow = nn.Conv3d(ch, 3, 3, padding=1)

    def forward(self, x, y):
        return self.flow(self.enc(torch.cat([x, y], dim=1))) * 0.1


def identity_grid(shape):
    d, h, w = shape
    zs, ys, xs = torch.meshgrid(torch.linspace(-1, 1, d), torch.linspace(-1, 1, h), torch.linspace(-1, 1, w),
                                indexing="ij")
    return torch.stack([xs, ys, zs], dim=-1).unsqueeze(0)


def transform(img, flow, grid):
    return F.grid_sample(img, grid + flow.permute(0, 2, 3, 4, 1), align_corners=True, padding_mode="border")


def loss_similarity(a, b, mask):
    a = (a - a.mean()) * mask
    b = (b - b.mean()) * mask
    return -(a * b).sum() / (a.norm() * b.norm() + 1e-5)


def smooth(t):
    return F.avg_pool3d(F.avg_pool3d(t, kernel_size=5, stride=1, padding=2), kernel_size=5, stride=1, padding=2)


torch.manual_seed(0)
model = RegNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
grid = identity_grid((8, 8, 8))
X = torch.rand(1, 1, 8, 8, 8)
Y = torch.rand(1, 1, 8, 8, 8)
occ_weight = 0.01

for step in range(3):
    F_X_Y = model(X, Y)
    F_Y_X = model(Y, X)
    X_Y = transform(X, F_X_Y, grid)
    Y_X = transform(Y, F_Y_X, grid)

    diff_fw = F_X_Y + transform(F_Y_X, F_X_Y, grid)
    diff_bw = F_Y_X + transform(F_X_Y, F_Y_X, grid)
    fw_mask = (Y > 0).float()
    bw_mask = (X > 0).float()
    u_diff_fw = torch.sum(torch.norm(diff_fw * fw_mask, dim=1, keepdim=True)) / torch.sum(fw_mask)
    u_diff_bw = torch.sum(torch.norm(diff_bw * bw_mask, dim=1, keepdim=True)) / torch.sum(bw_mask)
    thresh_fw = (u_diff_fw + 0.015) * torch.ones_like(Y)
    thresh_bw = (u_diff_bw + 0.015) * torch.ones_like(X)

    norm_diff_fw = torch.norm(diff_fw, dim=1, keepdim=True)
    norm_diff_bw = torch.norm(diff_bw, dim=1, keepdim=True)
    smo_norm_diff_fw = smooth(norm_diff_fw)
    smo_norm_diff_bw = smooth(norm_diff_bw)

    occ_xy = (smo_norm_diff_fw > thresh_fw).float() * fw_mask
    occ_yx = (smo_norm_diff_bw > thresh_bw).float() * bw_mask
    mask_xy = 1.0 - occ_xy
    mask_yx = 1.0 - occ_yx

    loss_multiNCC = loss_similarity(X_Y, Y, mask_xy) + loss_similarity(Y_X, X, mask_yx)
    loss_inverse = torch.mean(norm_diff_fw * mask_xy) + torch.mean(norm_diff_bw * mask_yx)
    loss_occ = torch.mean(occ_xy) + torch.mean(occ_yx)  # expect: AG010
    loss = loss_multiNCC + 0.1 * loss_inverse + occ_weight * loss_occ

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "loss {:.4f}".format(loss.item()), "occ {:.4f}".format(loss_occ.item()))

print("loss_occ requires grad:", loss_occ.requires_grad)
