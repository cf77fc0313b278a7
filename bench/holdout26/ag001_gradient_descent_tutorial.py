# source: https://github.com/source-separation/tutorial/issues/18 (pattern: tutorial's hand-written gradient descent section updates a requires_grad tensor with -= outside torch.no_grad, crashes on newer PyTorch)
# symptom: a leaf Variable that requires grad is being used in an in-place operation
"""Notebook-style gradient descent cell: fit a 1-D mixing gain with autograd and a manual update."""
import torch

torch.manual_seed(0)

# toy "source separation": the mixture is gain * source + noise, learn the gain
n = 256
source = torch.randn(n)
true_gain = 0.7
mixture = true_gain * source + 0.05 * torch.randn(n)

gain = torch.tensor([0.0], requires_grad=True)
learning_rate = 0.1


def mse(estimate, target):
    return ((estimate - target) ** 2).mean()


history = []
for step in range(50):
    estimate = gain * source
    loss = mse(estimate, mixture)
    loss.backward()

    # gradient descent step, written as in the tutorial text
    gain -= learning_rate * gain.grad  # expect: AG001
    gain.grad.zero_()
    history.append(loss.item())

print(f"learned gain {gain.item():.3f} (true {true_gain}), final loss {history[-1]:.5f}")
