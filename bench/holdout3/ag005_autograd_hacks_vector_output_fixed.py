# source: https://github.com/cybertronai/autograd-hacks/issues/8
# symptom: grad can be implicitly created only for scalar outputs
# Clean twin: backward from the one scalar per example that is wanted (summed over the batch).
import torch
import torch.nn as nn


def add_hooks(model):
    """autograd-hacks style: remember each Linear's input and the gradient w.r.t. its output."""
    handles = []
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            handles.append(layer.register_forward_hook(lambda m, i, o: setattr(m, "activations", i[0].detach())))
            handles.append(layer.register_full_backward_hook(lambda m, gi, go: setattr(m, "backprops", go[0].detach())))
    model.autograd_hacks_hooks = handles


def compute_grad1(model):
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            layer.weight.grad1 = torch.einsum("ni,nj->nij", layer.backprops, layer.activations)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
add_hooks(model)
data = torch.randn(4, 6)
output = model(data)
output[:, 0].sum().backward()
compute_grad1(model)
print(model[0].weight.grad1.shape)
