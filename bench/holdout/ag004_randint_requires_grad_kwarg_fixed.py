# source: https://github.com/pytorch/pytorch/issues/145609
# symptom: Only Tensors of floating point and complex dtype can require gradients
# Clean twin: integer samples are drawn without requires_grad (they cannot carry gradients).
import torch


def sample_indices(high, shape):
    randint_result = torch.randint(0, high, shape)
    return randint_result


idx = sample_indices(10, (4, 4))
print(idx.sum())
