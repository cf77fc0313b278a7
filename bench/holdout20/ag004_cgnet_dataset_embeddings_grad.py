# source: https://github.com/coarse-graining/cgnet/commit/06955e679576a3630f7696a3a3ec263757e8ceb7
# symptom: Only Tensors of floating point and complex dtype can require gradients
"""cgnet: force matching for a coarse-grained molecule, with bead-type embeddings fed from `MoleculeDataset`.

`MoleculeDataset.__getitem__` builds every item's tensors with `requires_grad=True`, including the embeddings
("do embeddings require grad?"), which are integer bead types: the first batch the DataLoader draws raises.
"""
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)


class MoleculeDataset(Dataset):
    def __init__(self, coordinates, forces, embeddings=None, selection=None, stride=1,
                 device=torch.device('cpu')):
        self.stride = stride
        self.coordinates = self._make_array(coordinates, selection)
        self.forces = self._make_array(forces, selection)
        self.embeddings = self._make_array(embeddings, selection) if embeddings is not None else None
        self.len = len(self.coordinates)
        self.device = device

    def __getitem__(self, index):
        if self.embeddings is None:
            return (
                torch.tensor(self.coordinates[index], requires_grad=True, device=self.device),
                torch.tensor(self.forces[index], device=self.device)
            )
        else:
            return (
                torch.tensor(self.coordinates[index], requires_grad=True, device=self.device),
                torch.tensor(self.forces[index], device=self.device),
                torch.tensor(self.embeddings[index],
                             requires_grad=True, device=self.device)  # expect: AG004
            )

    def __len__(self):
        return self.len

    def _make_array(self, data, selection=None):
        if selection is not None:
            data = [data[i] for i in selection]
        return data[::self.stride]


class CGnet(nn.Module):
    def __init__(self, n_beads, n_types=4, emb_dim=8, hidden=32):
        super().__init__()
        self.embedding = nn.Embedding(n_types, emb_dim)
        n_dist = n_beads * (n_beads - 1) // 2
        self.arch = nn.Sequential(nn.Linear(n_dist + n_beads * emb_dim, hidden), nn.Tanh(),
                                  nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.iu = torch.triu_indices(n_beads, n_beads, offset=1)

    def forward(self, coordinates, embedding_property):
        dist = (coordinates[:, self.iu[0]] - coordinates[:, self.iu[1]]).norm(dim=-1)
        emb = self.embedding(embedding_property).flatten(1)
        energy = self.arch(torch.cat([dist, emb], dim=1))
        forces = -torch.autograd.grad(energy.sum(), coordinates, create_graph=True)[0]
        return energy, forces


def ForceLoss(force, labels):
    return ((force - labels) ** 2).mean()


n_frames, n_beads = 64, 5
coords = torch.randn(n_frames, n_beads, 3).tolist()
forces = torch.randn(n_frames, n_beads, 3).tolist()
bead_types = [[0, 1, 2, 1, 3] for _ in range(n_frames)]

dataset = MoleculeDataset(coords, forces, bead_types)
loader = DataLoader(dataset, batch_size=16, shuffle=True)
net = CGnet(n_beads)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

for epoch in range(2):
    epoch_loss = 0.0
    for coord, force, embed in loader:
        optimizer.zero_grad()
        energy, pred_force = net(coord, embed)
        loss = ForceLoss(pred_force, force)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    print(f"epoch {epoch} force loss {epoch_loss / len(loader):.4f}")
