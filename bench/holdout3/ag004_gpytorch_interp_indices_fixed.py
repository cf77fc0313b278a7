# source: https://github.com/cornellius-gp/gpytorch/issues/169
# symptom: Only Tensors of floating point and complex dtype can require gradients
# Clean twin: the interpolation indices are built without requires_grad (only the values need gradients), as
# the maintainer answered.
import unittest

import torch
from torch.autograd import Variable


class InterpolatedLazyVariable:
    def __init__(self, base, left_interp_indices, left_interp_values, right_interp_indices, right_interp_values):
        self.base = base
        self.left_interp_indices, self.left_interp_values = left_interp_indices, left_interp_values
        self.right_interp_indices, self.right_interp_values = right_interp_indices, right_interp_values

    def _interp_matrix(self, indices, values, n):
        rows = torch.arange(indices.size(0)).unsqueeze(-1).expand_as(indices)
        dense = torch.zeros(indices.size(0), n, dtype=values.dtype)
        return dense.index_put((rows, indices), values, accumulate=True)

    def evaluate(self):
        n = self.base.size(0)
        left = self._interp_matrix(self.left_interp_indices, self.left_interp_values, n)
        right = self._interp_matrix(self.right_interp_indices, self.right_interp_values, n)
        return left @ self.base @ right.t()

    def inv_matmul(self, rhs):
        return torch.linalg.solve(self.evaluate() + torch.eye(rhs.size(0)), rhs)


class TestInterpolatedLazyVariable(unittest.TestCase):
    def test_inv_matmul(self):
        base_lazy_variable_mat = torch.randn(6, 6)
        base_lazy_variable_mat = base_lazy_variable_mat.t().matmul(base_lazy_variable_mat)
        test_matrix = torch.randn(3, 4)
        left_interp_indices = Variable(torch.LongTensor([[2, 3], [3, 4], [4, 5]]))
        left_interp_values = Variable(torch.Tensor([[1, 1], [1, 1], [1, 1]]), requires_grad=True)
        right_interp_indices = Variable(torch.LongTensor([[0, 1], [1, 2], [2, 3]]))
        right_interp_values = Variable(torch.Tensor([[1, 1], [1, 1], [1, 1]]), requires_grad=True)
        base = Variable(base_lazy_variable_mat, requires_grad=True)
        lazy = InterpolatedLazyVariable(base, left_interp_indices, left_interp_values, right_interp_indices,
                                        right_interp_values)
        res = lazy.inv_matmul(Variable(test_matrix))
        res.sum().backward()
        self.assertIsNotNone(left_interp_values.grad)


if __name__ == "__main__":
    unittest.main()
