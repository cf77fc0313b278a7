# source: https://github.com/pytorch/test-infra/issues/4687
# symptom: parameters meant to be frozen were updated: True
"""Fine-tuning only one named layer: the freezing loop writes
`param.require_grad = 'specific_layer' in name` for every parameter. `require_grad` is not the
autograd flag, so nothing is frozen and the whole network trains (the issue reports that TorchFix
missed this misspelling because the value is an expression, not a boolean literal; the maintainer
agrees it should be flagged).

Written for bench/holdout8: a small text classifier (embedding, two encoder blocks, the adapter named
`specific_layer`, a classifier head) fine-tuned for a few Adam steps on random token batches, with the
freezing loop of the report.
"""
import torch
import torch.nn as nn


class EncoderBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, num_heads=2, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.norm1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.ff(x))


class Classifier(nn.Module):
    def __init__(self, vocab=50, dim=16, num_classes=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.encoder = nn.ModuleList([EncoderBlock(dim) for _ in range(2)])
        self.specific_layer = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, tokens):
        x = self.embedding(tokens)
        for block in self.encoder:
            x = block(x)
        x = x + self.specific_layer(x)
        return self.head(x.mean(dim=1))


def freeze_all_but(model, layer_name):
    for name, param in model.named_parameters():
        param.require_grad = layer_name in name  # expect: AG018


def main():
    torch.manual_seed(0)
    model = Classifier()
    freeze_all_but(model, "specific_layer")
    before = {name: p.detach().clone() for name, p in model.named_parameters() if "specific_layer" not in name}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(3):
        tokens = torch.randint(0, 50, (8, 12))
        labels = torch.randint(0, 3, (8,))
        loss = nn.functional.cross_entropy(model(tokens), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")
    changed = any(not torch.equal(before[name], p.detach()) for name, p in model.named_parameters() if name in before)
    print("parameters meant to be frozen were updated:", changed)


if __name__ == "__main__":
    main()
