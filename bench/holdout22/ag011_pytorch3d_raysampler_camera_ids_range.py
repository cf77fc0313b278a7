# source: https://github.com/facebookresearch/pytorch3d/commit/f13086779de9d3b12ddb584a341c99e19c1748ef
# symptom: torch\.range is deprecated
"""pytorch3d renderer/implicit/raysampling.py before the fix: when no `n_rays_total` is
given, `MultinomialRaysampler.forward` builds the camera ids with
`torch.range(0, len(cameras), dtype=torch.long)` (inclusive end: one id too many, and the
deprecated API). The sampler feeds a tiny implicit-function fit.

Stand-ins: a minimal `Cameras` (R, T, device, len) and a simplified `_xy_to_ray_bundle`.
"""
from typing import NamedTuple, Optional

import torch


class RayBundle(NamedTuple):
    origins: torch.Tensor
    directions: torch.Tensor
    lengths: torch.Tensor
    xys: torch.Tensor


class Cameras:
    def __init__(self, R, T):
        self.R = R
        self.T = T
        self.device = R.device

    def __len__(self):
        return self.R.shape[0]


def _xy_to_ray_bundle(cameras, xy_grid, min_depth, max_depth, n_pts_per_ray, unit_directions):
    batch_size = xy_grid.shape[0]
    spatial_size = xy_grid.shape[1:-1]
    ones = xy_grid.new_ones(*xy_grid.shape[:-1], 1)
    cam_dirs = torch.cat([xy_grid, ones], dim=-1).reshape(batch_size, -1, 3)
    directions = torch.bmm(cam_dirs, cameras.R)
    if unit_directions:
        directions = torch.nn.functional.normalize(directions, dim=-1)
    origins = (-torch.bmm(cameras.T[:, None], cameras.R.transpose(1, 2))).expand_as(directions)
    lengths = torch.linspace(min_depth, max_depth, n_pts_per_ray, dtype=xy_grid.dtype)
    lengths = lengths.expand(batch_size, directions.shape[1], n_pts_per_ray)
    return RayBundle(
        origins.reshape(batch_size, *spatial_size, 3),
        directions.reshape(batch_size, *spatial_size, 3),
        lengths.reshape(batch_size, *spatial_size, n_pts_per_ray),
        xy_grid,
    )


class MultinomialRaysampler(torch.nn.Module):
    def __init__(self, *, min_x, max_x, min_y, max_y, image_width, image_height,
                 n_pts_per_ray, min_depth, max_depth, n_rays_per_image: Optional[int] = None,
                 unit_directions: bool = False):
        super().__init__()
        self._n_pts_per_ray = n_pts_per_ray
        self._min_depth = min_depth
        self._max_depth = max_depth
        self._n_rays_per_image = n_rays_per_image
        self._unit_directions = unit_directions
        _xy_grid = torch.stack(
            tuple(reversed(torch.meshgrid(
                torch.linspace(min_y, max_y, image_height, dtype=torch.float32),
                torch.linspace(min_x, max_x, image_width, dtype=torch.float32),
                indexing="ij",
            ))),
            dim=-1,
        )
        self.register_buffer("_xy_grid", _xy_grid, persistent=False)

    def forward(self, cameras, n_rays_per_image=None):
        n_rays_per_image = n_rays_per_image or self._n_rays_per_image
        camera_ids = torch.range(0, len(cameras), dtype=torch.long)  # expect: AG011

        batch_size = cameras.R.shape[0]
        device = cameras.device
        xy_grid = self._xy_grid.to(device).expand(batch_size, -1, -1, -1)

        if n_rays_per_image is not None:
            _, width, height, _ = xy_grid.shape
            weights = xy_grid.new_ones(batch_size, width * height)
            rays_idx = torch.multinomial(weights, n_rays_per_image, replacement=False)[..., None].expand(-1, -1, 2)
            xy_grid = torch.gather(xy_grid.reshape(batch_size, -1, 2), 1, rays_idx)[:, :, None]

        ray_bundle = _xy_to_ray_bundle(cameras, xy_grid, self._min_depth, self._max_depth,
                                       self._n_pts_per_ray, self._unit_directions)
        self.last_camera_ids = camera_ids
        return ray_bundle


class ImplicitFunction(torch.nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(3, hidden), torch.nn.Softplus(), torch.nn.Linear(hidden, 1))

    def forward(self, ray_bundle):
        points = ray_bundle.origins[..., None, :] + ray_bundle.directions[..., None, :] * ray_bundle.lengths[..., :, None]
        density = torch.sigmoid(self.mlp(points))[..., 0]
        return density.mean(dim=-1)


def main():
    torch.manual_seed(0)
    n_cameras = 2
    R = torch.linalg.qr(torch.randn(n_cameras, 3, 3))[0]
    T = torch.randn(n_cameras, 3)
    cameras = Cameras(R, T)
    raysampler = MultinomialRaysampler(min_x=-1.0, max_x=1.0, min_y=-1.0, max_y=1.0,
                                       image_width=8, image_height=8, n_pts_per_ray=6,
                                       min_depth=0.5, max_depth=3.0, n_rays_per_image=16)
    model = ImplicitFunction()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for it in range(5):
        ray_bundle = raysampler(cameras)
        silhouette = model(ray_bundle)
        target = (ray_bundle.xys.norm(dim=-1) < 0.7).float()
        loss = torch.nn.functional.mse_loss(silhouette, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("loss %.4f" % loss.item())
    print("camera ids:", raysampler.last_camera_ids.tolist(), "for", len(cameras), "cameras")


if __name__ == "__main__":
    main()
