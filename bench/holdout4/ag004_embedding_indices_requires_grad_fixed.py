# source: https://github.com/pytorch/pytorch/issues/7021
# symptom: [Oo]nly Tensors of floating point( and complex)? dtype can require gradients
# Clean twin: the indices do not require gradients (the thread: "you can't backprop to the indices"); the
# embedding weight still gets its gradient.
import torch

embedding = torch.nn.Embedding(10, 3)
indices = torch.LongTensor([0])
embedding(indices)[0, 0].backward()
print(embedding.weight.grad[0])
