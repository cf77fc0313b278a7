# source: https://github.com/KevinMusgrave/powerful-benchmarker/issues/78
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""powerful-benchmarker `misc_models.MLP` puts `nn.ReLU(inplace=True)` in front of each Linear but the last, so a
two-layer classifier starts by rewriting its input in place. With a trainer and a classifier, that input is the
embedding batch, which the metric loss (normalisation, distances) has already saved for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    # layer_sizes[0] is the input dimension, layer_sizes[-1] the output dimension
    def __init__(self, layer_sizes, final_relu=False):
        super().__init__()
        layer_list = []
        layer_sizes = [int(x) for x in layer_sizes]
        num_layers = len(layer_sizes) - 1
        final_relu_layer = num_layers if final_relu else num_layers - 1
        for i in range(len(layer_sizes) - 1):
            input_size = layer_sizes[i]
            curr_size = layer_sizes[i + 1]
            if i < final_relu_layer:
                layer_list.append(nn.ReLU(inplace=True))  # expect: AG006
            layer_list.append(nn.Linear(input_size, curr_size))
        self.net = nn.Sequential(*layer_list)
        self.last_linear = self.net[-1]

    def forward(self, x):
        return self.net(x)


class ContrastiveLoss(nn.Module):
    def __init__(self, pos_margin=0.0, neg_margin=1.0):
        super().__init__()
        self.pos_margin, self.neg_margin = pos_margin, neg_margin

    def forward(self, embeddings, labels):
        emb = F.normalize(embeddings, p=2, dim=1)
        dist = torch.cdist(emb, emb)
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        pos = F.relu(dist[same] - self.pos_margin)
        neg = F.relu(self.neg_margin - dist[~same])
        return pos.mean() + neg.mean()


class TrainWithClassifier:
    def __init__(self, models, optimizers, loss_funcs, loss_weights):
        self.models, self.optimizers = models, optimizers
        self.loss_funcs, self.loss_weights = loss_funcs, loss_weights
        self.losses = {}

    def compute_embeddings(self, data):
        trunk_output = self.models["trunk"](data)
        return self.models["embedder"](trunk_output)

    def maybe_get_logits(self, embeddings):
        return self.models["classifier"](embeddings)

    def calculate_loss(self, data, labels):
        embeddings = self.compute_embeddings(data)
        self.losses["metric_loss"] = self.loss_funcs["metric_loss"](embeddings, labels)
        logits = self.maybe_get_logits(embeddings)
        self.losses["classifier_loss"] = self.loss_funcs["classifier_loss"](logits, labels)

    def backward(self):
        total = sum(self.losses[k] * self.loss_weights[k] for k in self.losses)
        total.backward()

    def train(self, data_loader, num_epochs):
        for epoch in range(num_epochs):
            for data, labels in data_loader:
                for opt in self.optimizers.values():
                    opt.zero_grad()
                self.calculate_loss(data, labels)
                self.backward()
                for opt in self.optimizers.values():
                    opt.step()
            print(f"epoch {epoch} metric_loss {self.losses['metric_loss'].item():.4f} "
                  f"classifier_loss {self.losses['classifier_loss'].item():.4f}")


num_classes = 4
images = torch.randn(64, 3, 8, 8)
targets = torch.randint(0, num_classes, (64,))
data_loader = [(images[i:i + 16], targets[i:i + 16]) for i in range(0, 64, 16)]

trunk = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
embedder = MLP([8, 16])
classifier = MLP([16, 16, num_classes])
models = {"trunk": trunk, "embedder": embedder, "classifier": classifier}
optimizers = {name + "_optimizer": torch.optim.Adam(m.parameters(), lr=1e-3) for name, m in models.items()}
trainer = TrainWithClassifier(models, optimizers,
                              {"metric_loss": ContrastiveLoss(), "classifier_loss": nn.CrossEntropyLoss()},
                              {"metric_loss": 1.0, "classifier_loss": 0.5})
trainer.train(data_loader, num_epochs=3)
