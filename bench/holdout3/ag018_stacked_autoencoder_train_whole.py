# source: https://github.com/LitoNeo/pytorch-AutoEncoders/issues/2
# symptom: encoder layer 1 changed by fine-tuning: False
# The stacked autoencoder is pre-trained layer by layer with the other layers frozen; train_whole() is meant to
# unfreeze everything for fine-tuning but sets param.require_grad = True, a typo that only adds an attribute
# ("请问train_whole函数中param.require_grad = True应该是...吧"), so the earlier layers never train again.
import torch
import torch.nn as nn


class AutoEncoderLayer(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(input_dim, output_dim), nn.Sigmoid())
        self.decoder = nn.Sequential(nn.Linear(output_dim, input_dim), nn.Sigmoid())
        self.is_training_self = False

    def forward(self, x):
        out = self.encoder(x)
        return self.decoder(out) if self.is_training_self else out

    def lock_grad(self):
        for param in self.parameters():
            param.requires_grad = False

    def acquire_grad(self):
        for param in self.parameters():
            param.requires_grad = True


class StackedAutoEncoder(nn.Module):
    def __init__(self, layers_list):
        super().__init__()
        self.layers_list = nn.ModuleList(layers_list)

    def forward(self, x):
        for layer in self.layers_list:
            x = layer(x)
        return x


def train_layers(layers_list, layer, x, epochs=2):
    for i, l in enumerate(layers_list):
        l.lock_grad() if i != layer else l.acquire_grad()
    target = layers_list[layer]
    target.is_training_self = True
    optimizer = torch.optim.SGD(target.parameters(), lr=0.1)
    for _ in range(epochs):
        h = x
        with torch.no_grad():
            for l in layers_list[:layer]:
                h = l(h)
        loss = nn.functional.mse_loss(target(h), h)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    target.is_training_self = False


def train_whole(model, x, y, epochs=3):
    for param in model.parameters():
        param.require_grad = True  # expect: AG018
    head = nn.Linear(4, 2)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad] + list(head.parameters()), lr=0.1)
    for _ in range(epochs):
        loss = nn.functional.cross_entropy(head(model(x)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
layers = [AutoEncoderLayer(12, 8), AutoEncoderLayer(8, 4)]
x, y = torch.rand(16, 12), torch.randint(0, 2, (16,))
for layer in range(len(layers)):
    train_layers(layers, layer, x)
model = StackedAutoEncoder(layers)
before = layers[0].encoder[0].weight.detach().clone()
train_whole(model, x, y)
print("encoder layer 1 changed by fine-tuning:", not torch.equal(before, layers[0].encoder[0].weight))
