# source: https://github.com/kornia/kornia/commit/43caa33b057b578140642c325d8a43603efe3a95
# symptom: lambda nan
"""kornia geometry: intersect a fan of camera rays (`ParametrizedLine`) with the ground plane (`Hyperplane`).

`ParametrizedLine.intersect` fills the "no intersection" branch of its `torch.where` with
`torch.empty_like(dot_prod)`, so a ray parallel to the plane gets an uninitialised lambda (and point). The
program runs in deterministic mode, where PyTorch fills uninitialised memory with NaN, so the garbage shows on
every run.
"""
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)


def batched_dot_product(x, y, keepdim=False):
    return (x * y).sum(-1, keepdim=keepdim)


class Hyperplane(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self._normal = n
        self._offset = d

    @property
    def normal(self):
        return self._normal

    @property
    def offset(self):
        return self._offset

    @classmethod
    def through(cls, p0, p1, p2=None):
        v0, v1 = (p2 - p0), (p1 - p0)
        normal = torch.linalg.cross(v0, v1, dim=-1)
        normal = normal / normal.norm(dim=-1, keepdim=True)
        offset = -batched_dot_product(p0, normal)
        return cls(normal, offset)


class ParametrizedLine(nn.Module):
    def __init__(self, origin, direction):
        super().__init__()
        self._origin = nn.Parameter(origin)
        self._direction = nn.Parameter(direction)

    @property
    def origin(self):
        return self._origin

    @property
    def direction(self):
        return self._direction

    @classmethod
    def through(cls, p0, p1):
        return cls(p0, (p1 - p0) / (p1 - p0).norm(dim=-1, keepdim=True))

    def point_at(self, t):
        return self.origin + self.direction * t[..., None]

    def intersect(self, plane, eps=1e-6):
        dot_prod = batched_dot_product(plane.normal.data, self.direction.data)
        dot_prod_mask = dot_prod.abs() >= eps

        # TODO: add check for dot product
        res_lambda = torch.where(
            dot_prod_mask,
            -(plane.offset + batched_dot_product(plane.normal.data, self.origin.data)) / dot_prod,
            torch.empty_like(dot_prod),  # expect: AG012
        )

        res_point = self.point_at(res_lambda)
        return res_lambda, res_point


ground = Hyperplane.through(torch.tensor([0.0, 0.0, 0.0]), torch.tensor([1.0, 0.0, 0.0]),
                            torch.tensor([0.0, 1.0, 0.0]))
camera = torch.tensor([0.0, 0.0, 2.0])
for pitch in (-1.0, -0.5, 0.0):
    target = torch.tensor([1.0, 0.0, 2.0 + pitch])
    ray = ParametrizedLine.through(camera, target)
    lmbda, point = ray.intersect(ground)
    print(f"ray pitch {pitch:+.1f}: lambda {lmbda.item():.3f} point {[round(v, 3) for v in point.tolist()]}")
