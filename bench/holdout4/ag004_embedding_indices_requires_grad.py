# source: https://github.com/pytorch/pytorch/issues/7021
# symptom: [Oo]nly Tensors of floating point( and complex)? dtype can require gradients
# "Backproping through Embedding in 0.4.0 fails": the lookup indices, a LongTensor, are marked requires_grad_()
# before the embedding call; torch now refuses integer tensors that require gradients.
import torch

embedding = torch.nn.Embedding(10, 3)
indices = torch.LongTensor([0]).requires_grad_()  # expect: AG004
embedding(indices)[0, 0].backward()
print(embedding.weight.grad[0])
