# source: https://github.com/Harry24k/adversarial-attacks-pytorch/issues/2
# symptom: you can only change requires_grad flags of leaf variables
# torchattacks 0.9's DeepFool.forward attacks one image of the batch at a time: image = images[b:b+1] gets
# requires_grad = True, and when the prediction flips the inner loop breaks before the `.detach()` that ends each
# step, so images[b:b+1] = image writes a tensor that requires grad into the batch; the next image sliced from it is
# then a computed tensor and `image.requires_grad = True` raises. The fix detached the image at the break too.
# Re-created with the Attack base class and the DeepFool subclass.
import torch
import torch.nn as nn


class Attack(object):
    def __init__(self, name, model):
        self.attack = name
        self.model = model
        self.training = model.training
        self.device = torch.device("cuda" if next(model.parameters()).is_cuda else "cpu")

    def __call__(self, *inputs, **kwargs):
        self.model.eval()
        images = self.forward(*inputs, **kwargs)
        if self.training:
            self.model.train()
        return images

    def forward(self, *inputs):
        raise NotImplementedError


class DeepFool(Attack):
    def __init__(self, model, iters=3):
        super(DeepFool, self).__init__("DeepFool", model)
        self.iters = iters

    def forward(self, images, labels):
        images = images.to(self.device)
        labels = labels.to(self.device)
        for b in range(images.shape[0]):
            image = images[b:b + 1, :, :, :]
            label = labels[b:b + 1]
            image.requires_grad = True  # expect: AG014
            output = self.model(image)[0]
            _, pre_0 = torch.max(output, 0)
            f_0 = output[pre_0]
            grad_f_0 = torch.autograd.grad(f_0, image, retain_graph=False, create_graph=False)[0]
            num_classes = len(output)
            for i in range(self.iters):
                image.requires_grad = True
                output = self.model(image)[0]
                _, pre = torch.max(output, 0)
                if pre != pre_0:
                    break
                r = None
                min_value = None
                for k in range(num_classes):
                    if k == pre_0:
                        continue
                    f_k = output[k]
                    grad_f_k = torch.autograd.grad(f_k, image, retain_graph=True, create_graph=True)[0]
                    f_prime = f_k - f_0
                    grad_f_prime = grad_f_k - grad_f_0
                    value = torch.abs(f_prime) / torch.norm(grad_f_prime)
                    if r is None or min_value > value:
                        r = (torch.abs(f_prime) / (torch.norm(grad_f_prime) ** 2)) * grad_f_prime
                        min_value = value
                image = torch.clamp(image + r, min=0, max=1).detach()
            images[b:b + 1, :, :, :] = image
        adv_images = images
        return adv_images


torch.manual_seed(1)
model = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))
images = torch.rand(4, 1, 4, 4)
labels = torch.randint(0, 3, (4,))
attack = DeepFool(model, iters=3)
adv = attack(images, labels)
print("adversarial batch", tuple(adv.shape))
