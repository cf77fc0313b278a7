# source: https://github.com/IBM/aihwkit/issues/446
# symptom: gradients accumulated across \d+ steps: True
# examples/01_simple_layer.py trains one (analog) linear layer for a few epochs with loss.backward(); opt.step()
# and no opt.zero_grad(): "the loss decrease then increase again". Re-created with torch.nn.Linear and SGD.
import torch
from torch.nn import Linear
from torch.nn.functional import mse_loss
from torch.optim import SGD

# Prepare the datasets (input and expected output).
x = torch.tensor([[0.1, 0.2, 0.4, 0.3], [0.2, 0.1, 0.1, 0.3]])
y = torch.tensor([[1.0, 0.5], [0.7, 0.3]])

# Define a single-layer network.
model = Linear(4, 2)
fresh = []
model.weight.register_hook(lambda g: fresh.append(g.clone()))

# Define an optimizer.
opt = SGD(model.parameters(), lr=0.1)

for epoch in range(10):
    # Add the training Tensor to the model (input).
    pred = model(x)
    # Add the expected output Tensor.
    loss = mse_loss(pred, y)
    # Run training (backward propagation).
    loss.backward()

    opt.step()  # expect: AG016
    print(f"Loss error: {loss:.16f}")

accumulated = len(fresh) > 1 and torch.allclose(model.weight.grad, torch.stack(fresh).sum(0))
print(f"gradients accumulated across {len(fresh)} steps: {accumulated}")
