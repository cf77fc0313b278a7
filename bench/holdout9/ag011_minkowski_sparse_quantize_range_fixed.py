# source: https://github.com/NVIDIA/MinkowskiEngine/issues/101
# symptom: range\(\) missing 1 required positional argument
"""Fixed twin: the maintainer's fix for the issue (commit a37ed76, "Fix an error torch.range --> torch.arange in
`sparse_quantize` (Issue #101)"): the fallback index is `torch.arange(len(discrete_coords), dtype=torch.long)`, so an
empty crop gives an empty index and the training loop skips it.
"""
from collections.abc import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def quantize(coords):
    """Stand-in for MEB.quantize_th: indices of the first point of every occupied voxel."""
    assert isinstance(coords, torch.Tensor), "Invalid coords type"
    coords = coords.int()
    if coords.shape[0] == 0:
        return torch.zeros(0, dtype=torch.long)
    _, inverse = torch.unique(coords, dim=0, return_inverse=True)
    order = torch.arange(coords.shape[0])
    first = torch.full((int(inverse.max()) + 1,), coords.shape[0], dtype=torch.long)
    first = first.scatter_reduce(0, inverse, order, reduce="amin")
    return first


def sparse_quantize(coords, feats=None, labels=None, ignore_label=-100, return_index=False,
                    quantization_size=None):
    assert isinstance(coords, torch.Tensor), "Coords must be a torch.Tensor."
    use_feat = feats is not None
    assert coords.ndim == 2, "The coordinates must be a 2D matrix. The shape of the input is " + str(coords.shape)
    if use_feat:
        assert feats.ndim == 2
        assert coords.shape[0] == feats.shape[0]

    dimension = coords.shape[1]
    if quantization_size is not None:
        if isinstance(quantization_size, (Sequence, torch.Tensor)):
            assert len(quantization_size) == dimension, "Quantization size and coordinates size mismatch."
            quantization_size = torch.Tensor([i for i in quantization_size])
            discrete_coords = (coords / quantization_size).floor()
        else:
            discrete_coords = (coords / quantization_size).floor()
    else:
        discrete_coords = coords
    discrete_coords = discrete_coords.int()

    mapping = quantize(discrete_coords)
    if len(mapping) > 0:
        if return_index:
            return mapping
        if use_feat:
            return discrete_coords[mapping], feats[mapping]
        return discrete_coords[mapping]
    else:
        if return_index:
            return torch.arange(len(discrete_coords), dtype=torch.long)
        if use_feat:
            return discrete_coords, feats
        return discrete_coords


class CroppedClouds(torch.utils.data.Dataset):
    """Random point clouds with a colour feature; each item is cropped to a box around a random centre."""

    def __init__(self, n_items=12, n_points=200):
        self.items = []
        for i in range(n_items):
            coords = torch.rand(n_points, 3) * 2.0
            feats = torch.rand(n_points, 3)
            label = int(feats[:, 0].mean() > 0.5)
            # item 5 is cropped far away from its points: the crop is empty
            centre = torch.full((3,), 10.0) if i == 5 else torch.rand(3) * 2.0
            self.items.append((coords, feats, label, centre))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        coords, feats, label, centre = self.items[idx]
        keep = ((coords - centre).abs() < 0.75).all(1)
        return coords[keep], feats[keep], label


class VoxelNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.point_mlp = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 32))
        self.cls = nn.Linear(32, 2)

    def forward(self, voxel_coords, voxel_feats):
        h = self.point_mlp(torch.cat([voxel_coords.float() / 10.0, voxel_feats], 1))
        return self.cls(h.max(0).values)


def train(dataset, model, epochs=2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(epochs):
        for idx in range(len(dataset)):
            coords, feats, label = dataset[idx]
            unique_map = sparse_quantize(coords, return_index=True, quantization_size=0.1)
            if len(unique_map) == 0:
                continue  # nothing left in the crop
            voxel_coords = (coords[unique_map] / 0.1).floor().int()
            logits = model(voxel_coords, feats[unique_map])
            loss = F.cross_entropy(logits[None], torch.tensor([label]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("epoch %d loss %.4f" % (epoch, loss.item()))


if __name__ == "__main__":
    train(CroppedClouds(), VoxelNet())
