# source: https://github.com/OmidPoursaeed/Generative_Adversarial_Perturbations/issues/4
# symptom: grad wrong: netG's gradient differs from the same computation written without \.data
# "Wrong Implementation": GAP_clf.py's normalize_and_scale(delta_im) shifts, rescales and clips the generator's tanh output
# through delta_im.data between the forward and loss.backward(), so the gradients ignore (and are corrupted by) those edits.
import copy

import torch
import torch.nn as nn

mean_arr = [0.485, 0.456, 0.406]
stddev_arr = [0.229, 0.224, 0.225]
mag_in = 10.0
batch_size = 2


class ResnetGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.model(x)


def normalize_and_scale(delta_im, mode="train"):
    delta_im.data += 1  # expect: AG008
    delta_im.data *= 0.5  # expect: AG008
    # normalize image color channels
    for c in range(3):
        delta_im.data[:, c, :, :] = (delta_im.data[:, c, :, :] - mean_arr[c]) / stddev_arr[c]  # expect: AG008
    # threshold each channel of each image in deltaIm according to inf norm
    for i in range(batch_size):
        for ci in range(3):
            l_inf_channel = delta_im[i, ci, :, :].data.abs().max()
            mag_in_scaled_c = mag_in / (255.0 * stddev_arr[ci])
            delta_im[i, ci, :, :].data *= min(1.0, mag_in_scaled_c / float(l_inf_channel))  # expect: AG008
    return delta_im


def normalize_and_scale_tracked(delta_im):
    """The same arithmetic, out of place, so autograd sees it (the l_inf factors are constants, as above)."""
    delta_im = (delta_im + 1) * 0.5
    mean = torch.tensor(mean_arr).view(1, 3, 1, 1)
    std = torch.tensor(stddev_arr).view(1, 3, 1, 1)
    delta_im = (delta_im - mean) / std
    l_inf = delta_im.detach().abs().amax(dim=(2, 3), keepdim=True)
    factor = torch.clamp((mag_in / (255.0 * std)) / l_inf, max=1.0)
    return delta_im * factor


def train_step(netG, pretrained_clf, noise_tr, image, target_label, criterion_pre, scale):
    netG.zero_grad()
    delta_im = netG(noise_tr)
    delta_im = scale(delta_im)
    recons = torch.add(image, delta_im)
    output_pretrained = pretrained_clf(recons)
    loss = torch.log(criterion_pre(output_pretrained, target_label))
    loss.backward()
    return [p.grad.clone() for p in netG.parameters()]


torch.manual_seed(0)
netG = ResnetGenerator()
pretrained_clf = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
for p in pretrained_clf.parameters():
    p.requires_grad = False
criterion_pre = nn.CrossEntropyLoss()
noise_tr = torch.rand(batch_size, 3, 12, 12) * 2 - 1
image = torch.randn(batch_size, 3, 12, 12)
with torch.no_grad():
    _, target_label = torch.min(pretrained_clf(image), 1)  # least likely class

reference = train_step(copy.deepcopy(netG), pretrained_clf, noise_tr, image, target_label, criterion_pre,
                       normalize_and_scale_tracked)
grads = train_step(netG, pretrained_clf, noise_tr, image, target_label, criterion_pre, normalize_and_scale)
worst = max((g - r).abs().max().item() / (r.abs().max().item() + 1e-12) for g, r in zip(grads, reference))
if worst > 1e-3:
    print(f"grad wrong: netG's gradient differs from the same computation written without .data (rel. diff {worst:.2f})")
else:
    print("gradients agree")
