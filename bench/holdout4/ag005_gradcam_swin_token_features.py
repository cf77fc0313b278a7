# source: https://github.com/jacobgil/pytorch-grad-cam/issues/446
# symptom: grad can be implicitly created only for scalar outputs
# pytorch-grad-cam's BaseCAM sums the targets' scores over the batch and calls loss.backward(retain_graph=True).
# With the user's Swin Transformer the model returns its token features, (B, L, C), instead of class logits, so
# ClassifierOutputTarget's `model_output[:, category]` is one score per token and the summed "loss" is a vector.
import torch
import torch.nn as nn


class ClassifierOutputTarget:
    def __init__(self, category):
        self.category = category

    def __call__(self, model_output):
        if len(model_output.shape) == 1:
            return model_output[self.category]
        return model_output[:, self.category]


class ActivationsAndGradients:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = []
        self.gradients = []
        target_layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, input, output):
        self.activations.append(output.detach())
        output.register_hook(lambda grad: self.gradients.insert(0, grad.detach()))

    def __call__(self, x):
        self.activations, self.gradients = [], []
        return self.model(x)


class BaseCAM:
    def __init__(self, model, target_layer):
        self.model = model.eval()
        self.activations_and_grads = ActivationsAndGradients(model, target_layer)

    def forward(self, input_tensor, targets):
        outputs = self.activations_and_grads(input_tensor)
        self.model.zero_grad()
        loss = sum([target(output) for target, output in zip(targets, outputs)])
        loss.backward(retain_graph=True)  # expect: AG005
        activations = self.activations_and_grads.activations[-1]
        grads = self.activations_and_grads.gradients[-1]
        weights = grads.mean(dim=1, keepdim=True)
        return torch.relu((weights * activations).sum(dim=-1))

    def __call__(self, input_tensor, targets):
        return self.forward(input_tensor, targets)


class TinySwin(nn.Module):
    """Patch embedding + transformer blocks; forward returns the token features, as the user's backbone did."""

    def __init__(self, dim=16, num_classes=5):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=4, stride=4)
        self.layers = nn.Sequential(nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=32, batch_first=True))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        return self.layers(x)


torch.manual_seed(0)
model = TinySwin()
cam = BaseCAM(model=model, target_layer=model.layers[-1])
img_tensor = torch.rand(2, 3, 16, 16)
target_category = [ClassifierOutputTarget(3), ClassifierOutputTarget(3)]
grayscale_cam = cam(input_tensor=img_tensor, targets=target_category)
print("cam shape:", tuple(grayscale_cam.shape))
