"""DP-NeRF: the rigid blurring kernel adds its epsilon to the rotation angle in place.

`SE3Field.warp` (utils/rigid_warping.py) computes `theta = torch.linalg.norm(rot, axis=-1)` and then `theta += 1e-10`
before dividing the screw axis by it. The norm's backward needs its own output, so after some iterations of training
`loss.backward()` stops with "... output 0 of LinalgVectorNormBackward0, is at version 1; expected version 0".
"""
# source: https://github.com/dogyoonlee/DP-NeRF/issues/2
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
import torch
import torch.nn as nn
import torch.nn.functional as F


class RigidBody:
    def skew(self, w):
        zero = torch.zeros_like(w[..., 0])
        rows = [zero, -w[..., 2], w[..., 1], w[..., 2], zero, -w[..., 0], -w[..., 1], w[..., 0], zero]
        return torch.stack(rows, dim=-1).reshape(w.shape[0], 3, 3)

    def exp_so3(self, w, theta):
        W = self.skew(w)
        theta = theta[..., None, None]
        return torch.eye(3)[None] + torch.sin(theta) * W + (1.0 - torch.cos(theta)) * torch.matmul(W, W)

    def exp_se3(self, S, theta):
        w, v = torch.split(S, [3, 3], dim=-1)
        W = self.skew(w)
        R = self.exp_so3(w, theta)
        th = theta[..., None, None]
        p = torch.matmul(th * torch.eye(3)[None] + (1.0 - torch.cos(th)) * W + (th - torch.sin(th)) * torch.matmul(W, W), v[..., None])
        bottom = torch.tensor([0.0, 0.0, 0.0, 1.0])[None, None].repeat(R.shape[0], 1, 1)
        return torch.cat([torch.cat([R, p], -1), bottom], dim=-2)

    def to_homogenous(self, v):
        return torch.cat([v, torch.ones_like(v[..., :1])], dim=-1)

    def from_homogenous(self, v):
        return v[..., :3] / v[..., -1:]


class SE3Field:
    def __init__(self):
        self.rigid_body = RigidBody()

    def warp(self, pts, rot, trans):
        theta = torch.linalg.norm(rot, axis=-1)
        theta += 1.0e-10  # expect: AG006
        rot = rot / theta.unsqueeze(-1)
        trans = trans / theta.unsqueeze(-1)
        transform = self.rigid_body.exp_se3(torch.cat([rot, trans], dim=-1), theta)
        warped = torch.matmul(transform, self.rigid_body.to_homogenous(pts)[..., None]).squeeze(-1)
        return self.rigid_body.from_homogenous(warped)


class RigidBlurringKernel(nn.Module):
    """Per-image embedding -> one small rigid motion (rotation, translation) per ray."""

    def __init__(self, num_img, embed_dim=8):
        super().__init__()
        self.embed = nn.Embedding(num_img, embed_dim)
        self.rot_mlp = nn.Sequential(nn.Linear(embed_dim + 3, 16), nn.ReLU(), nn.Linear(16, 3))
        self.trans_mlp = nn.Sequential(nn.Linear(embed_dim + 3, 16), nn.ReLU(), nn.Linear(16, 3))
        self.se3 = SE3Field()

    def forward(self, rays_o, img_idx):
        h = torch.cat([self.embed(img_idx), rays_o], dim=-1)
        rot = 0.01 * self.rot_mlp(h) + 1e-3
        trans = 0.01 * self.trans_mlp(h)
        return self.se3.warp(rays_o, rot, trans)


class TinyNeRF(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))

    def render(self, rays_o, rays_d, n_samples=16):
        t = torch.linspace(2.0, 6.0, n_samples)
        pts = rays_o[:, None] + rays_d[:, None] * t[None, :, None]
        raw = self.mlp(pts)
        rgb, sigma = torch.sigmoid(raw[..., :3]), F.relu(raw[..., 3])
        alpha = 1.0 - torch.exp(-sigma * (t[1] - t[0]))
        trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], -1), -1)[:, :-1]
        return ((alpha * trans)[..., None] * rgb).sum(1)


def main():
    torch.manual_seed(0)
    num_img, n_rays = 4, 64
    nerf, kernel = TinyNeRF(), RigidBlurringKernel(num_img)
    optimizer = torch.optim.Adam(list(nerf.parameters()) + list(kernel.parameters()), lr=5e-4)
    for it in range(3):
        img_idx = torch.randint(0, num_img, (n_rays,))
        rays_o = 0.1 * torch.randn(n_rays, 3)
        rays_d = F.normalize(torch.randn(n_rays, 3) + torch.tensor([0.0, 0.0, 1.0]), dim=-1)
        target = torch.rand(n_rays, 3)
        warped_o = kernel(rays_o, img_idx)
        rgb = 0.5 * (nerf.render(warped_o, rays_d) + nerf.render(rays_o, rays_d))
        loss = F.mse_loss(rgb, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"[TRAIN] Iter: {it} Loss: {loss.item():.5f}")


if __name__ == "__main__":
    main()
