# source: https://github.com/keras-team/keras-core/pull/417
# symptom: you can only change requires_grad flags of leaf variables
# keras-core's torch backend implemented `ops.stop_gradient(x)` as `x.requires_grad_(False)`; that works on an input
# tensor but raises when x was computed by the model, e.g. the straight-through estimator of a VQ-VAE's vector
# quantizer, `x + stop_gradient(quantized - x)`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TorchBackendOps:
    """The few backend ops the layer below uses, as the torch backend had them."""

    @staticmethod
    def convert_to_tensor(x, dtype=None):
        return torch.as_tensor(x, dtype=dtype)

    @staticmethod
    def argmin(x, axis):
        return torch.argmin(x, dim=axis)

    @staticmethod
    def stop_gradient(variable):
        return variable.requires_grad_(False)  # expect: AG014


ops = TorchBackendOps()


class VectorQuantizer(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, beta=0.25):
        super().__init__()
        self.beta = beta
        self.embeddings = nn.Parameter(torch.rand(embedding_dim, num_embeddings) * 2 - 1)

    def forward(self, x):
        flattened = x.reshape(-1, x.shape[-1])
        distances = (
            flattened.pow(2).sum(dim=1, keepdim=True)
            + self.embeddings.pow(2).sum(dim=0)
            - 2 * flattened @ self.embeddings
        )
        encoding_indices = ops.argmin(distances, axis=1)
        quantized = F.one_hot(encoding_indices, self.embeddings.shape[1]).float() @ self.embeddings.t()
        quantized = quantized.reshape(x.shape)
        commitment_loss = F.mse_loss(x, ops.stop_gradient(quantized))
        codebook_loss = F.mse_loss(quantized, ops.stop_gradient(x))
        self.vq_loss = self.beta * commitment_loss + codebook_loss
        # straight-through estimator: gradients of the decoder flow to the encoder unchanged
        return x + ops.stop_gradient(quantized - x)


class VQVAE(nn.Module):
    def __init__(self, latent_dim=4, num_embeddings=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, latent_dim))
        self.quantizer = VectorQuantizer(num_embeddings, latent_dim)
        self.decoder = nn.Sequential(nn.Linear(latent_dim, 16), nn.ReLU(), nn.Linear(16, 12))

    def forward(self, x):
        return self.decoder(self.quantizer(self.encoder(x)))


torch.manual_seed(0)
vqvae = VQVAE()
optimizer = torch.optim.Adam(vqvae.parameters(), lr=1e-3)
for step in range(3):
    batch = torch.randn(16, 12)
    reconstructions = vqvae(batch)
    loss = F.mse_loss(reconstructions, batch) + vqvae.quantizer.vq_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f}")
