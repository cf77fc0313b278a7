# source: https://github.com/pytorch/text/commit/40d8115c5ce9620b71d4bda61b448f57f5f54649
# symptom: gradients carried over from the previous step: True
"""torchtext examples/text_classification/train.py after the fix: optimizer.zero_grad() at
the start of every batch, before the forward (the commit also switches the scheduler to
StepLR(optimizer, 1, gamma) stepped once per epoch, and logs its lr; kept here). Before the fix the SGD loop over
EmbeddingBag batches calls loss.backward() and optimizer.step() but never zeroes the
gradients, so every step applies the sum of all earlier gradients too.

Stand-ins: a small random corpus of token-id bags instead of the torchtext datasets.
"""
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class TextSentiment(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=True)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


def generate_batch(batch):
    def generate_offsets(data_batch):
        offsets = [0]
        for entry in data_batch:
            offsets.append(offsets[-1] + len(entry))
        offsets = torch.tensor(offsets[:-1])
        return offsets

    cls = torch.tensor([entry[0] for entry in batch])
    text = [entry[1] for entry in batch]
    offsets = generate_offsets(text)
    text = torch.cat(text)
    return text, offsets, cls


def train(lr_, num_epochs, data_):
    data = DataLoader(data_, batch_size=batch_size, shuffle=True,
                      collate_fn=generate_batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr_)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=lr_gamma)
    num_lines = num_epochs * len(data)
    carried = False
    for epoch in range(num_epochs):
        for i, (text, offsets, cls) in enumerate(data):
            optimizer.zero_grad()
            text, offsets, cls = text.to(device), offsets.to(device), cls.to(device)
            output = model(text, offsets)
            loss = criterion(output, cls)
            g = model.fc.weight.grad
            carried = carried or (g is not None and bool(g.abs().sum() > 0))
            loss.backward()
            optimizer.step()

            processed_lines = i + len(data) * epoch
            progress = processed_lines / float(num_lines)
            if processed_lines % 4 == 0:
                sys.stderr.write(
                    "\rProgress: {:3.0f}% lr: {:3.3f} loss: {:3.3f}".format(
                        progress * 100, scheduler.get_last_lr()[0], loss.item()))
        # Adjust the learning rate
        scheduler.step()
    sys.stderr.write("\n")
    print("gradients carried over from the previous step:", carried)


if __name__ == "__main__":
    torch.manual_seed(0)
    num_epochs = 2
    embed_dim = 16
    batch_size = 8
    lr = 4.0
    lr_gamma = 0.999
    device = "cpu"
    vocab_size, num_class = 50, 4

    train_dataset = []
    for _ in range(64):
        n = int(torch.randint(3, 10, (1,)))
        train_dataset.append((int(torch.randint(0, num_class, (1,))), torch.randint(0, vocab_size, (n,))))

    model = TextSentiment(vocab_size, embed_dim, num_class).to(device)
    criterion = torch.nn.CrossEntropyLoss().to(device)
    train(lr, num_epochs, train_dataset)
