# source: https://github.com/rballester/tntorch/pull/19
# symptom: losses keep the graph of every iteration: True
"""Twin (the fix the pull request describes, the loss history no longer holding a graph: the history keeps detached
values and backward runs on the current total).
tntorch `autodiff.optimize(tensors, loss_function)`: the high-level fitting loop appended each iteration's total
loss tensor, `losses.append(reduce(lambda x, y: x + y, loss))`, and used `losses[-1]`, `losses[-2]` for its stopping
rule; every stored loss kept the full graph through the tensor-train cores (the leak of the pull request)."""
import time
from functools import reduce

import torch

torch.manual_seed(0)


class Tensor:
    """A minimal tensor-train (TT) tensor: a list of 3D cores (rank_left, n, rank_right)."""

    def __init__(self, cores):
        self.cores = cores
        self.Us = [None] * len(cores)

    def torch(self):
        full = self.cores[0]
        for core in self.cores[1:]:
            full = torch.einsum('...a,abc->...bc', full, core)
        return full.squeeze(0).squeeze(-1)

    def dim(self):
        return len(self.cores)


def rand(shape, ranks_tt, requires_grad=False):
    ranks = [1] + [ranks_tt] * (len(shape) - 1) + [1]
    cores = [(torch.randn(ranks[i], n, ranks[i + 1]) / n ** 0.5).requires_grad_(requires_grad) for i, n in enumerate(shape)]
    return Tensor(cores)


def optimize(tensors, loss_function, optimizer=torch.optim.Adam, tol=1e-4, max_iter=1e4, print_freq=500, verbose=True):
    """High-level wrapper for iterative learning."""
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors]
    parameters = []
    for t in tensors:
        if isinstance(t, Tensor):
            parameters.extend([c for c in t.cores if c.requires_grad])
            parameters.extend([U for U in t.Us if U is not None and U.requires_grad])
        elif t.requires_grad:
            parameters.append(t)
    if len(parameters) == 0:
        raise ValueError("There are no parameters to optimize. Did you forget a requires_grad=True somewhere?")

    optimizer = optimizer(parameters, lr=1e-2)
    losses = []
    converged = False
    start = time.time()
    iter = 0
    while True:
        optimizer.zero_grad()
        loss = loss_function(*tensors)
        if not isinstance(loss, (tuple, list)):
            loss = [loss]
        total_loss = reduce(lambda x, y: x + y, loss)
        losses.append(total_loss.detach())
        if len(losses) >= 2:
            delta_loss = (losses[-1] - losses[-2])
        else:
            delta_loss = float('-inf')
        if iter >= 2 and tol is not None and (losses[-1] <= tol or -delta_loss / losses[-1] <= tol) and losses[-2] - \
                losses[-1] < losses[-3] - losses[-2]:
            converged = True
            break
        if iter == max_iter:
            break
        if verbose and iter % print_freq == 0:
            print('iter: {: <{}} | loss: '.format(iter, len('{}'.format(max_iter))), end='')
            print(' + '.join(['{:10.6f}'.format(l.item()) for l in loss]), end='')
            print(' | total time: {:9.4f}'.format(time.time() - start))
        total_loss.backward()
        optimizer.step()
        iter += 1
    if verbose:
        print('iter: {} | loss: {:10.6f} | {}'.format(iter, losses[-1].item(), 'converged' if converged else 'max_iter'))
    return losses


# Fit a TT decomposition to a 16 x 16 "picture", as in the pull request
picture = torch.outer(torch.linspace(0, 1, 16), torch.linspace(1, 0, 16)) + 0.1 * torch.randn(16, 16)
t = rand(picture.shape, ranks_tt=3, requires_grad=True)


def loss_function(t):
    return ((t.torch() - picture) ** 2).sum()


losses = optimize(t, loss_function, max_iter=60, print_freq=20)
print(f"losses keep the graph of every iteration: {any(l.grad_fn is not None for l in losses)}")
