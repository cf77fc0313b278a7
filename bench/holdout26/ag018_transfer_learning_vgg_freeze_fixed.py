# source: https://github.com/udacity/deep-learning-v2-pytorch/issues/12 (pattern: transfer-learning notebook freezes the pretrained feature extractor with param.require_grad = False, a misspelled attribute, so the features keep training)
# symptom: frozen features changed: True
"""Transfer learning: reuse a (stand-in) pretrained feature extractor, train only a new classifier head.

Fixed: the attribute is spelled `requires_grad`, so the feature layers really are frozen.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class VGGLike(nn.Module):
    def __init__(self, n_classes=1000):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


vgg16 = VGGLike()

# Freeze training for all "features" layers
for param in vgg16.features.parameters():
    param.requires_grad = False

n_inputs = vgg16.classifier[-1].in_features
vgg16.classifier[-1] = nn.Linear(n_inputs, 5)

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(vgg16.parameters(), lr=0.05)
before = [p.detach().clone() for p in vgg16.features.parameters()]

images = torch.randn(10, 3, 16, 16)
labels = torch.randint(0, 5, (10,))
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(vgg16(images), labels)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch + 1} loss {loss.item():.4f}")

changed = any(not torch.equal(b, p) for b, p in zip(before, vgg16.features.parameters()))
print("frozen features changed:", changed)
