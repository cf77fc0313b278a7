# source: https://github.com/udacity/deep-learning-v2-pytorch/pull/90
# symptom: vgg parameters receive gradients: True
"""Udacity "Style Transfer" notebook: VGG19's `features` are frozen and only the target image is optimised. The pull
request rewrote the freeze as `param.required_grad = False` (requireD): a new, unused attribute on each parameter, so
nothing is frozen and every backward also fills the VGG weights' gradients."""
import torch
import torch.nn as nn
import torch.optim as optim


def make_features():
    # stand-in for models.vgg19(pretrained=True).features (same layer kinds, far smaller)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
    )


def get_features(image, model, layers=None):
    if layers is None:
        layers = {"0": "conv1_1", "5": "conv2_1", "7": "conv2_2", "10": "conv3_1"}
    features = {}
    x = image
    for name, layer in model._modules.items():
        x = layer(x)
        if name in layers:
            features[layers[name]] = x
    return features


def gram_matrix(tensor):
    _, d, h, w = tensor.size()
    tensor = tensor.view(d, h * w)
    return torch.mm(tensor, tensor.t())


torch.manual_seed(0)
vgg = make_features()
for param in vgg.parameters():
    param.required_grad = False  # expect: AG018

content = torch.rand(1, 3, 16, 16)
style = torch.rand(1, 3, 16, 16)
content_features = get_features(content, vgg)
style_features = get_features(style, vgg)
style_grams = {layer: gram_matrix(style_features[layer]).detach() for layer in style_features}
target = content.clone().requires_grad_(True)

style_weights = {"conv1_1": 1.0, "conv2_1": 0.75, "conv2_2": 0.5, "conv3_1": 0.2}
content_weight = 1
style_weight = 1e3
optimizer = optim.Adam([target], lr=0.003)

for ii in range(1, 4):
    target_features = get_features(target, vgg)
    content_loss = torch.mean((target_features["conv2_2"] - content_features["conv2_2"].detach()) ** 2)
    style_loss = 0
    for layer in style_weights:
        target_feature = target_features[layer]
        target_gram = gram_matrix(target_feature)
        _, d, h, w = target_feature.shape
        layer_style_loss = style_weights[layer] * torch.mean((target_gram - style_grams[layer]) ** 2)
        style_loss += layer_style_loss / (d * h * w)
    total_loss = content_weight * content_loss + style_weight * style_loss
    optimizer.zero_grad()
    total_loss.backward()
    optimizer.step()
    print("step", ii, "total loss {:.6f}".format(total_loss.item()))

print("vgg parameters receive gradients:", any(p.grad is not None for p in vgg.parameters()))
