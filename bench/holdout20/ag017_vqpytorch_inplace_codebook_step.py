# source: https://github.com/lucidrains/vector-quantize-pytorch/commit/3c86917339b2679e99f460368239cd93e311a04a
# symptom: Trying to backward through the graph a second time
"""vector-quantize-pytorch: a VQ autoencoder whose learnable codebook is updated inside `VectorQuantize.forward`
by its own `in_place_codebook_optimizer` ("one step in-place update").

The in-place update computes `((quantize - x) ** 2).mean().backward()` on the encoder output `x` without detaching
it, so that backward also runs (and frees) the encoder's graph; after the codebook step the training loop's
`loss.backward()` goes back through the same encoder graph and raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def l2norm(t):
    return F.normalize(t, p=2, dim=-1)


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size, learnable_codebook=False):
        super().__init__()
        embed = torch.randn(codebook_size, dim)
        self.learnable_codebook = learnable_codebook
        if learnable_codebook:
            self.embed = nn.Parameter(embed)
        else:
            self.register_buffer('embed', embed)

    def transform_input(self, x):
        return x

    def forward(self, x):
        embed = self.embed if self.learnable_codebook else self.embed.detach()
        flatten = x.reshape(-1, x.shape[-1])
        dist = -torch.cdist(flatten, embed) ** 2
        embed_ind = dist.argmax(dim=-1)
        embed_onehot = F.one_hot(embed_ind, embed.shape[0]).type(x.dtype)
        quantize = embed_onehot @ embed
        return quantize.view_as(x), embed_ind.view(x.shape[:-1]), dist


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, codebook_dim=None, commitment_weight=1.,
                 learnable_codebook=False, in_place_codebook_optimizer=None):
        super().__init__()
        codebook_dim = codebook_dim or dim
        self.project_in = nn.Linear(dim, codebook_dim) if codebook_dim != dim else nn.Identity()
        self.project_out = nn.Linear(codebook_dim, dim) if codebook_dim != dim else nn.Identity()
        self.commitment_weight = commitment_weight
        self._codebook = EuclideanCodebook(codebook_dim, codebook_size, learnable_codebook=learnable_codebook)
        if in_place_codebook_optimizer is not None:
            self.in_place_codebook_optimizer = in_place_codebook_optimizer(self._codebook.parameters())

    def forward(self, x):
        should_inplace_optimize = hasattr(self, 'in_place_codebook_optimizer')

        x = self.project_in(x)
        x = self._codebook.transform_input(x)

        quantize, embed_ind, distances = self._codebook(x)

        if should_inplace_optimize and self.training:
            # One step in-place update
            ((quantize - x) ** 2).mean().backward()
            self.in_place_codebook_optimizer.step()
            self.in_place_codebook_optimizer.zero_grad()

            # Quantize again
            quantize, embed_ind, distances = self._codebook(x)

        if self.training:
            quantize = x + (quantize - x).detach()

        loss = torch.tensor(0.)
        if self.training and self.commitment_weight > 0:
            commit_loss = F.mse_loss(quantize.detach(), x)
            loss = loss + commit_loss * self.commitment_weight

        quantize = self.project_out(quantize)
        return quantize, embed_ind, loss


class VQAutoEncoder(nn.Module):
    def __init__(self, dim=16, hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, hidden), nn.ReLU(), nn.Linear(hidden, dim))
        self.vq = VectorQuantize(dim, codebook_size=32, codebook_dim=8, learnable_codebook=True,
                                 in_place_codebook_optimizer=lambda params: torch.optim.SGD(params, lr=0.1))
        self.decoder = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, 8))

    def forward(self, x):
        z = self.encoder(x)
        q, indices, commit_loss = self.vq(z)
        return self.decoder(q), indices, commit_loss


model = VQAutoEncoder()
params = [p for n, p in model.named_parameters() if '_codebook' not in n]
opt = torch.optim.Adam(params, lr=3e-4)
data = torch.randn(256, 8)

model.train()
for step in range(20):
    batch = data[torch.randint(0, 256, (32,))]
    opt.zero_grad()
    out, indices, commit_loss = model(batch)
    rec_loss = (out - batch).abs().mean()
    loss = rec_loss + commit_loss
    loss.backward()  # expect: AG017
    opt.step()
    if step % 5 == 0:
        print(f"step {step} rec {rec_loss.item():.4f} commit {commit_loss.item():.4f} "
              f"active codes {indices.unique().numel()}")
