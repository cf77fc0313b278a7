# source: https://github.com/pytorch/pytorch/issues/145609
# symptom: Only Tensors of floating point and complex dtype can require gradients
# The reporter reads torch.randint's documented requires_grad= keyword and passes it: the integer result cannot
# require grad, so the factory call itself raises. Re-created as their minified repro inside a small sampler helper.
import torch


def sample_indices(high, shape):
    randint_result = torch.randint(0, high, shape, requires_grad=True)  # expect: AG004
    return randint_result


idx = sample_indices(10, (4, 4))
print(idx.sum())
