# source: https://github.com/facebookresearch/pytorch3d/commit/3b5ab51de55aa47f6ca691dda19cf5907f168a4c
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""facebookresearch/pytorch3d after commit 3b5ab51: `cot_laplacian` symmetrises out of place,
`L = L + L.t()`, and also writes the area clamp (`clamp`) and `cot = cot / 4.0` out of place, so
nothing autograd recorded is modified before the backward to the vertices."""
from typing import Tuple

import torch


def cot_laplacian(verts: torch.Tensor, faces: torch.Tensor,
                  eps: float = 1e-12) -> Tuple[torch.Tensor, torch.Tensor]:
    """Sparse (V, V) Laplacian with cotangent weights, and the inverse face areas per vertex."""
    V, F = verts.shape[0], faces.shape[0]

    face_verts = verts[faces]
    v0, v1, v2 = face_verts[:, 0], face_verts[:, 1], face_verts[:, 2]

    # side lengths; A is opposite v0, B opposite v1, C opposite v2
    A = (v1 - v2).norm(dim=1)
    B = (v0 - v2).norm(dim=1)
    C = (v0 - v1).norm(dim=1)

    # Heron's formula, clipped to a small positive value before sqrt()
    s = 0.5 * (A + B + C)
    area = (s * (s - A) * (s - B) * (s - C)).clamp(min=eps).sqrt()

    A2, B2, C2 = A * A, B * B, C * C
    cota = (B2 + C2 - A2) / area
    cotb = (A2 + C2 - B2) / area
    cotc = (A2 + B2 - C2) / area
    cot = torch.stack([cota, cotb, cotc], dim=1)
    cot = cot / 4.0

    # L[v1, v2] = cota, L[v2, v0] = cotb, L[v0, v1] = cotc
    ii = faces[:, [1, 2, 0]]
    jj = faces[:, [2, 0, 1]]
    idx = torch.stack([ii, jj], dim=0).view(2, F * 3)
    L = torch.sparse_coo_tensor(idx, cot.view(-1), (V, V), dtype=torch.float32)

    # make it symmetric
    L = L + L.t()

    # for each vertex, the sum of the areas of the triangles containing it
    idx = faces.view(-1)
    inv_areas = torch.zeros(V, dtype=torch.float32, device=verts.device)
    val = torch.stack([area] * 3, dim=1).view(-1)
    inv_areas.scatter_add_(0, idx, val)
    idx = inv_areas > 0
    inv_areas[idx] = torch.reciprocal(inv_areas[idx])
    inv_areas = inv_areas.view(-1, 1)
    return L, inv_areas


def grid_mesh(n=5):
    ys, xs = torch.meshgrid(torch.linspace(0, 1, n), torch.linspace(0, 1, n), indexing="ij")
    verts = torch.stack([xs.reshape(-1), ys.reshape(-1), torch.zeros(n * n)], dim=1)
    faces = []
    for r in range(n - 1):
        for c in range(n - 1):
            i = r * n + c
            faces.append([i, i + 1, i + n])
            faces.append([i + 1, i + n + 1, i + n])
    return verts, torch.tensor(faces)


def main():
    torch.manual_seed(0)
    verts, faces = grid_mesh()
    target_z = 0.2 * torch.sin(3 * verts[:, 0]) * torch.cos(3 * verts[:, 1])
    offsets = torch.zeros_like(verts, requires_grad=True)
    optimizer = torch.optim.Adam([offsets], lr=1e-2)
    for step in range(3):
        optimizer.zero_grad()
        new_verts = verts + offsets
        L, inv_areas = cot_laplacian(new_verts, faces)
        L_dense = L.to_dense()
        norm_w = L_dense.sum(dim=1, keepdim=True)
        lap = L_dense.mm(new_verts) / norm_w.clamp(min=1e-6) - new_verts
        loss_smooth = (lap.norm(dim=1) * inv_areas.squeeze(1)).mean()
        loss_data = ((new_verts[:, 2] - target_z) ** 2).mean()
        loss = loss_data + 0.01 * loss_smooth
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.5f}")


if __name__ == "__main__":
    main()
