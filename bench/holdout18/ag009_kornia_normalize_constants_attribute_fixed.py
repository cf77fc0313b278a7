# source: https://github.com/kornia/kornia/pull/4330
# symptom: Normalize constants left behind by \.to\(\): True
"""kornia `enhance/normalize.py`: the `Normalize` module turns its `mean` and `std` arguments into tensors and keeps
them as plain attributes (`self.mean = mean`, `self.std = std`). `.to()` only moves parameters and buffers, so a
preprocessing pipeline built on the CPU and moved to an accelerator keeps CPU constants; eager mode hides it (the
functional `normalize` converts them on every call), `torch.export` refuses the mix. As in the pull request, which had
no accelerator either, this program shows it through the dtype: the pipeline is moved to float64 and the constants
stay float32.

Fixed as the merged pull request does: the constants are registered as non-persistent buffers,
`self.register_buffer("mean", mean, persistent=False)` (and `std`), so they move with `.to()` and stay out of
`state_dict()`."""
from typing import List, Tuple, Union

import torch
from torch import Tensor, nn


def normalize(data: Tensor, mean: Tensor, std: Tensor) -> Tensor:
    shape = data.shape
    if isinstance(mean, float):
        mean = torch.tensor([mean] * shape[1], device=data.device, dtype=data.dtype)
    if isinstance(std, float):
        std = torch.tensor([std] * shape[1], device=data.device, dtype=data.dtype)
    if mean.shape and mean.shape[0] != 1:
        if mean.shape[0] != data.shape[1] and mean.shape[:2] != data.shape[:2]:
            raise ValueError(f"mean length and number of channels do not match. Got {mean.shape} and {data.shape}.")
    if std.shape and std.shape[0] != 1:
        if std.shape[0] != data.shape[1] and std.shape[:2] != data.shape[:2]:
            raise ValueError(f"std length and number of channels do not match. Got {std.shape} and {data.shape}.")
    mean = torch.as_tensor(mean, device=data.device, dtype=data.dtype)
    std = torch.as_tensor(std, device=data.device, dtype=data.dtype)
    mean = mean[..., None]
    std = std[..., None]
    out = (data.view(shape[0], shape[1], -1) - mean) / std
    return out.view(shape)


class Normalize(nn.Module):
    def __init__(self, mean: Union[Tensor, Tuple[float], List[float], float],
                 std: Union[Tensor, Tuple[float], List[float], float]) -> None:
        super().__init__()
        if isinstance(mean, (int, float)):
            mean = torch.tensor([mean])
        if isinstance(std, (int, float)):
            std = torch.tensor([std])
        if isinstance(mean, (tuple, list)):
            mean = torch.tensor(mean)[None]
        if isinstance(std, (tuple, list)):
            std = torch.tensor(std)[None]
        self.register_buffer("mean", mean, persistent=False)
        self.register_buffer("std", std, persistent=False)

    def forward(self, input: Tensor) -> Tensor:
        return normalize(input, self.mean, self.std)


torch.manual_seed(0)
preprocess = nn.Sequential(Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)))
classifier = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                           nn.Linear(8, 4))
model = nn.Sequential(preprocess, classifier).to(torch.float64)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

images = torch.rand(16, 3, 12, 12, dtype=torch.float64)
labels = torch.randint(0, 4, (16,))
for step in range(5):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    print("step", step, "loss {:.4f}".format(loss.item()))

left_behind = any(t.dtype != torch.float64 for m in preprocess for t in (m.mean, m.std))
print("Normalize constants left behind by .to():", left_behind)
