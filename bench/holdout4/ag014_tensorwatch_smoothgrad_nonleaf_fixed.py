# source: https://github.com/microsoft/tensorwatch/issues/25
# symptom: you can only change requires_grad flags of leaf variables
# Clean twin: SmoothGrad works on the input detached from any earlier graph, so each noisy sample is a
# leaf and _backprop can make it require grad (the error message's `.detach()` advice).
import torch
import torch.nn as nn


class VanillaGradExplainer(object):
    def __init__(self, model):
        self.model = model

    def _backprop(self, inp, ind):
        inp.requires_grad = True
        if inp.grad is not None:
            inp.grad.zero_()
        self.model.eval()
        self.model.zero_grad()
        output = self.model(inp)
        if ind is None:
            ind = output.max(1)[1]
        grad_out = torch.zeros_like(output)
        grad_out.scatter_(1, ind.unsqueeze(0).t(), 1.0)
        output.backward(grad_out)
        return inp.grad

    def explain(self, inp, ind=None):
        return self._backprop(inp, ind)


class SmoothGradExplainer(object):
    def __init__(self, model, base_explainer=None, stdev_spread=0.15, nsamples=4):
        self.base_explainer = base_explainer or VanillaGradExplainer(model)
        self.stdev_spread = stdev_spread
        self.nsamples = nsamples

    def explain(self, inp, ind=None):
        inp = inp.detach()
        stdev = self.stdev_spread * (inp.max() - inp.min())
        total_gradients = 0
        for _ in range(self.nsamples):
            noise = torch.randn_like(inp) * stdev
            noisy_inp = inp + noise
            grad = self.base_explainer.explain(noisy_inp, ind)
            total_gradients += grad ** 2
        return total_gradients / self.nsamples


def get_explainer(method, model):
    if method == "vanilla_grad":
        return VanillaGradExplainer(model)
    if method == "smooth_grad":
        return SmoothGradExplainer(model)
    raise ValueError(method)


def get_image_saliency_results(model, input_tensor, prediction_tensor, methods):
    results = {}
    for method in methods:
        results[method] = get_explainer(method, model).explain(input_tensor, prediction_tensor)
    return results


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
input_tensor = torch.rand(1, 3, 8, 8)
prediction_tensor = torch.tensor([2])
results = get_image_saliency_results(model, input_tensor, prediction_tensor, methods=["vanilla_grad", "smooth_grad"])
print({name: tuple(sal.shape) for name, sal in results.items()})
