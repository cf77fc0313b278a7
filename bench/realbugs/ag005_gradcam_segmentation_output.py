# source: https://github.com/jacobgil/pytorch-grad-cam/issues/109
# symptom: grad can be implicitly created only for scalar outputs
# pytorch-grad-cam's BaseCAM.get_loss sums output[i, target_category[i]] over the batch and calls
# loss.backward(retain_graph=True); it assumes classification scores [batch, classes]. The reporter's model was a
# U-Net (segmentation): output[i, c] is a whole [H, W] map, the loss is not a scalar and backward raises (the answer:
# reduce the map first, e.g. its mean or a pixel). Re-created with ActivationsAndGradients, BaseCAM and GradCAM
# (torch in place of numpy/cv2) and a small encoder-decoder.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActivationsAndGradients:
    def __init__(self, model, target_layer, reshape_transform=None):
        self.model = model
        self.gradients = []
        self.activations = []
        self.reshape_transform = reshape_transform
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, input, output):
        self.activations.append(output.detach())

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


class BaseCAM:
    def __init__(self, model, target_layer, use_cuda=False, reshape_transform=None):
        self.model = model.eval()
        self.target_layer = target_layer
        self.cuda = use_cuda
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layer, reshape_transform)

    def get_cam_weights(self, input_tensor, target_category, activations, grads):
        raise Exception("Not Implemented")

    def get_loss(self, output, target_category):
        loss = 0
        for i in range(len(target_category)):
            loss = loss + output[i, target_category[i]]
        return loss

    def get_cam_image(self, input_tensor, target_category, activations, grads):
        weights = self.get_cam_weights(input_tensor, target_category, activations, grads)
        return (weights[:, :, None, None] * activations).sum(dim=1)

    def forward(self, input_tensor, target_category=None):
        output = self.activations_and_grads(input_tensor)
        if type(target_category) is int:
            target_category = [target_category] * input_tensor.size(0)
        if target_category is None:
            target_category = output.argmax(dim=1).tolist()
        self.model.zero_grad()
        loss = self.get_loss(output, target_category)
        loss.backward(retain_graph=True)  # expect: AG005
        activations = self.activations_and_grads.activations[-1]
        grads = self.activations_and_grads.gradients[-1]
        cam = F.relu(self.get_cam_image(input_tensor, target_category, activations, grads))
        return cam

    def __call__(self, input_tensor, target_category=None):
        return self.forward(input_tensor, target_category)


class GradCAM(BaseCAM):
    def __init__(self, model, target_layer, use_cuda=False, reshape_transform=None):
        super(GradCAM, self).__init__(model, target_layer, use_cuda, reshape_transform)

    def get_cam_weights(self, input_tensor, target_category, activations, grads):
        return grads.mean(dim=(2, 3))


class SmallUNet(nn.Module):
    def __init__(self, n_classes=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.down = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.head = nn.Conv2d(16, n_classes, 1)

    def forward(self, x):
        e = self.enc(x)
        d = self.up(self.down(e))
        return self.head(torch.cat([e, d], dim=1))  # [batch, classes, H, W]


torch.manual_seed(0)
model1 = SmallUNet()
cam = GradCAM(model=model1, target_layer=model1.down)
grayscale_cam = cam(input_tensor=torch.randn(1, 3, 16, 16), target_category=1)
print(grayscale_cam.shape)
