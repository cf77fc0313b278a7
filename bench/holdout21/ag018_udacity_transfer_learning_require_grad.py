# source: https://github.com/udacity/deep-learning-v2-pytorch/commit/c0f521637d7cd47487f68025adf7a1b39f380d5b
# symptom: frozen features still get gradients: True
"""udacity/deep-learning-v2-pytorch transfer-learning/Transfer_Learning_Solution.ipynb before
"Syntax update for requires_grad": the cell meant to freeze VGG-16's convolutional "features"
sets `param.require_grad = False` (a new, unused attribute), so every backward still computes
gradients for all the feature layers."""
import torch
import torch.nn as nn
import torch.optim as optim


def vgg16_stand_in(num_classes=1000):
    """a small VGG-shaped network: `features` (conv blocks) and a 7-layer `classifier`"""
    model = nn.Module()
    model.features = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))
    model.avgpool = nn.AdaptiveAvgPool2d((2, 2))
    model.classifier = nn.Sequential(
        nn.Linear(16 * 2 * 2, 32), nn.ReLU(True), nn.Dropout(),
        nn.Linear(32, 32), nn.ReLU(True), nn.Dropout(),
        nn.Linear(32, num_classes))

    def forward(x):
        x = model.avgpool(model.features(x))
        return model.classifier(torch.flatten(x, 1))
    model.forward = forward
    return model


def main():
    torch.manual_seed(0)
    classes = ['daisy', 'dandelion', 'roses', 'sunflowers', 'tulips']
    vgg16 = vgg16_stand_in()

    # Freeze training for all "features" layers
    for param in vgg16.features.parameters():
        param.require_grad = False  # expect: AG018

    n_inputs = vgg16.classifier[6].in_features
    # add last linear layer (n_inputs -> 5 flower classes)
    # new layers automatically have requires_grad = True
    last_layer = nn.Linear(n_inputs, len(classes))
    vgg16.classifier[6] = last_layer

    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(vgg16.classifier.parameters(), lr=0.001)

    train_loader = [(torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,))) for _ in range(3)]
    for epoch in range(1, 3):
        train_loss = 0.0
        for batch_i, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            output = vgg16(data)
            loss = criterion(output, target)
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
        print('Epoch %d loss: %.6f' % (epoch, train_loss / len(train_loader)))
    got = any(p.grad is not None for p in vgg16.features.parameters())
    print('frozen features still get gradients:', got)


if __name__ == '__main__':
    main()
