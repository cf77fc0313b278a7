# source: https://github.com/idiap/fast-transformers/pull/10
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""idiap/fast-transformers (pull request #10, fixed by commit f60d7ad "Fixes #10"): the recurrent
RecurrentLinearAttention.forward updates its state with `Zi += K` and
`Si += torch.einsum("nhd,nhm->nhdm", K, value)`; the previous step's einsums saved Zi and Si for
backward, so training a model that runs the recurrent attention over a sequence and back-propagates
through its outputs raises at `loss.backward()`."""
import torch
from torch.nn import Module
import torch.nn as nn


def elu_feature_map(x):
    return torch.nn.functional.elu(x) + 1


class RecurrentLinearAttention(Module):
    """Causal linear attention as a recurrent model with a fixed-size state (Si, Zi)."""

    def __init__(self, feature_map=None, eps=1e-6):
        super(RecurrentLinearAttention, self).__init__()
        self.feature_map = feature_map or elu_feature_map
        self.eps = eps

    def forward(self, query, key, value, memory=None):
        Q = self.feature_map(query)
        K = self.feature_map(key)

        N, H, D = Q.shape
        _, _, M = value.shape

        if memory is None:
            Si = query.new_zeros((N, H, D, M))
            Zi = query.new_zeros((N, H, D))
        else:
            Si, Zi = memory

        if len(Si) != N:
            raise ValueError("The batch size changed during iteration")

        # Update the internal state
        Zi += K  # expect: AG006
        Si += torch.einsum("nhd,nhm->nhdm", K, value)  # expect: AG006

        # Compute the output
        Z = 1. / (torch.einsum("nhd,nhd->nh", Q, Zi) + self.eps)
        V = torch.einsum("nhd,nhdm,nh->nhm", Q, Si, Z)

        return V, [Si, Zi]


class RecurrentAttentionLayer(Module):
    def __init__(self, attention, d_model, n_heads):
        super().__init__()
        d_keys = d_model // n_heads
        self.inner_attention = attention
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_keys * n_heads)
        self.out_projection = nn.Linear(d_keys * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, query, key, value, state=None):
        N, D = query.shape
        H = self.n_heads
        query = self.query_projection(query).view(N, H, -1)
        key = self.key_projection(key).view(N, H, -1)
        value = self.value_projection(value).view(N, H, -1)
        new_value, state = self.inner_attention(query, key, value, state)
        return self.out_projection(new_value.view(N, -1)), state


def main():
    torch.manual_seed(0)
    d_model, n_heads, seq_len, batch = 16, 2, 6, 4
    layer = RecurrentAttentionLayer(RecurrentLinearAttention(), d_model, n_heads)
    head = nn.Linear(d_model, 1)
    optimizer = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
    x = torch.randn(seq_len, batch, d_model)
    y = torch.randn(seq_len, batch, 1)
    for step in range(2):
        optimizer.zero_grad()
        state = None
        outputs = []
        for t in range(seq_len):
            out, state = layer(x[t], x[t], x[t], state=state)
            outputs.append(head(out))
        loss = ((torch.stack(outputs) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
