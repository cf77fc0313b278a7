# source: https://github.com/pytorch/examples/pull/1424
# symptom: gradients carried over from the previous step: True
"""pytorch/examples `distributed/tensor_parallelism/tensor_parallel_example.py` (and its two siblings):
the training loop runs `output = tp_model(inp)`, `output.sum().backward()`, `optimizer.step()` for
`num_iters` iterations and never calls `zero_grad()`, so iteration n steps on the sum of all gradients
so far. The tensor-parallel wrapping (DeviceMesh, `parallelize_module`) needs several processes and is
left out here; the loop is the example's. The program records whether a backward started from the
previous iterations' gradients."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ToyModel(nn.Module):
    """MLP based model"""

    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(10, 32)
        self.relu = nn.ReLU()
        self.out_proj = nn.Linear(32, 5)

    def forward(self, x):
        return self.out_proj(self.relu(self.in_proj(x)))


def main():
    tp_model = ToyModel()
    lr = 0.25
    optimizer = torch.optim.AdamW(tp_model.parameters(), lr=lr, foreach=True)
    num_iters = 10
    carried = False
    for i in range(num_iters):
        inp = torch.rand(20, 10)
        output = tp_model(inp)
        carried = carried or any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in tp_model.parameters())
        output.sum().backward()
        optimizer.step()  # expect: AG016
        print(f"Tensor Parallel iter {i} completed")
    print(f"gradients carried over from the previous step: {carried}")


if __name__ == "__main__":
    main()
