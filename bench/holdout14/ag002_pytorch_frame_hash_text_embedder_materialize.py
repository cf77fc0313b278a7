"""pytorch-frame: text columns pre-embedded with a trainable nn.Embedding keep their graph into training.

`HashTextEmbedder` (torch_frame.testing) hashes each sentence to a bin and looks it up in an `nn.Embedding`. The
dataset's `materialize()` runs it once over the whole text column, before any training, and stores the result as the
`text_embedded` feature. The embedding table is a leaf that requires grad and the lookup keeps its graph, so the stored
features hang on one graph: the first mini-batch's `loss.backward()` frees it and the second one fails.
"""
# source: https://github.com/pyg-team/pytorch-frame/pull/229
# symptom: Trying to backward through the graph a second time
import zlib

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader


class HashTextEmbedder:
    """Hash each sentence into one of `num_hash_bins` rows of an nn.Embedding."""

    def __init__(self, out_channels, num_hash_bins=64):
        self.out_channels = out_channels
        self.num_hash_bins = num_hash_bins
        self.embedding = nn.Embedding(num_hash_bins, out_channels)

    def __call__(self, sentences):
        idx = torch.tensor([zlib.crc32(s.encode()) % self.num_hash_bins for s in sentences], dtype=torch.long)
        return self.embedding(idx)


class TextTabularDataset:
    def __init__(self, texts, numbers, target, text_embedder, batch_size=16):
        self.texts, self.numbers, self.target = texts, numbers, target
        self.text_embedder = text_embedder
        self.batch_size = batch_size
        self.feat_dict = None

    def materialize(self):
        texts, bs = self.texts, self.batch_size
        self.feat_dict = {
            "numerical": (self.numbers - self.numbers.mean(0)) / self.numbers.std(0),
            "text_embedded": torch.cat([self.text_embedder(texts[i:i + bs]) for i in range(0, len(texts), bs)]),  # expect: AG002
        }
        return self

    def __len__(self):
        return len(self.texts)

    def batch(self, index):
        return {k: v[index] for k, v in self.feat_dict.items()}, self.target[index]


class TabularModel(nn.Module):
    def __init__(self, num_numerical, text_channels, channels=16, out_channels=2):
        super().__init__()
        self.numerical_encoder = nn.Linear(num_numerical, channels)
        self.text_encoder = nn.Linear(text_channels, channels)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(2 * channels, channels), nn.ReLU(), nn.Linear(channels, out_channels))

    def forward(self, feat):
        x = torch.cat([self.numerical_encoder(feat["numerical"]), self.text_encoder(feat["text_embedded"])], dim=-1)
        return self.head(x)


def main():
    torch.manual_seed(0)
    words = ["red", "green", "blue", "small", "large", "fast", "slow", "old", "new", "cheap"]
    n = 96
    picks = torch.randint(0, len(words), (n, 3))
    texts = [" ".join(words[j] for j in row) for row in picks.tolist()]
    numbers = torch.randn(n, 4)
    target = ((numbers[:, 0] + (picks[:, 0] < 5).float()) > 0.5).long()

    dataset = TextTabularDataset(texts, numbers, target, HashTextEmbedder(out_channels=8)).materialize()
    model = TabularModel(num_numerical=4, text_channels=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = DataLoader(range(len(dataset)), batch_size=32, shuffle=True)
    for epoch in range(3):
        total = 0.0
        for index in loader:
            feat, y = dataset.batch(index)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(feat), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(index)
        print(f"epoch {epoch} loss {total / len(dataset):.4f}")


if __name__ == "__main__":
    main()
