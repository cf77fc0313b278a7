# source: https://github.com/pytorch/pytorch/issues/72332
# symptom: frozen feature extractor was updated: True
"""pytorch/pytorch#72332: loading a pretrained VGG16 and freezing it with
`for params in net.parameters(): params.require_grad = False` raises nothing, it only sets a new Python
attribute; the "frozen" backbone keeps requiring grad and is fine-tuned with the new head. Written for this set
as the fine-tuning script the issue describes: a small VGG-style network stands in for
`torchvision.models.vgg16(pretrained=True)` (its weights saved as the "pretrained" state), the classifier's last
layer is replaced for 3 classes and an SGD loop trains on random images.

Fixed twin: the attribute spelled `requires_grad`, as the issue says the user meant."""
import copy

import torch
import torch.nn as nn


def vgg_like(num_classes=1000):
    features = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
    )
    classifier = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.ReLU(True), nn.Dropout(), nn.Linear(32, num_classes))
    net = nn.Sequential()
    net.features = features
    net.avgpool = nn.AdaptiveAvgPool2d((4, 4))
    net.flatten = nn.Flatten()
    net.classifier = classifier
    return net


def main():
    torch.manual_seed(0)
    net = vgg_like()
    pretrained_features = copy.deepcopy(net.features.state_dict())

    for params in net.parameters():
        params.requires_grad = False
    net.classifier[3] = nn.Linear(32, 3)

    optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.05, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for step in range(5):
        images = torch.randn(8, 3, 16, 16)
        labels = torch.randint(0, 3, (8,))
        optimizer.zero_grad()
        loss = criterion(net(images), labels)
        loss.backward()
        optimizer.step()
        print("step", step, "loss", round(loss.item(), 4))

    changed = any(not torch.equal(v, net.features.state_dict()[k]) for k, v in pretrained_features.items())
    print("frozen feature extractor was updated:", changed)


if __name__ == "__main__":
    main()
