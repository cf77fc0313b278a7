# source: https://github.com/Animadversio/GAN-Geometry/issues/4
# symptom: grad can be implicitly created only for scalar outputs
# GANForwardHVPOperator.apply perturbs the code in two directions at once (perturb_vecs has 2 rows), renders both,
# and takes torch.autograd.grad(activs, perturb_vecs) of the objective; the reporter's objective returned one
# activation per image (a [2] tensor), so the grad without grad_outputs raised; the fix was activs.mean().
# Re-created with the Operator base class, the operator's __init__/apply/vHv_form and a small generator + CNN objective.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Operator:
    def __init__(self, size):
        self.size = size

    def apply(self, vec):
        raise NotImplementedError


class TinyGenerator(nn.Module):
    def __init__(self, code_len=8):
        super().__init__()
        self.fc = nn.Linear(code_len, 3 * 8 * 8)

    def visualize(self, code):
        return torch.sigmoid(self.fc(code)).view(-1, 3, 8, 8)


class GANForwardHVPOperator(Operator):
    def __init__(self, model, code, objective,
                 preprocess=lambda img: F.interpolate(img, (16, 16), mode="bilinear", align_corners=True), EPS=1e-2):
        for param in model.parameters():
            param.requires_grad_(False)
        self.model = model
        self.objective = objective
        self.preprocess = preprocess
        self.code = code.clone().requires_grad_(False).float()
        self.img_ref = self.model.visualize(self.code)
        self.size = self.code.numel()
        self.EPS = EPS
        self.perturb_norm = self.code.norm() * self.EPS

    def apply(self, vec, EPS=None):
        vecnorm = vec.norm()
        if vecnorm < 1e-8:
            return torch.zeros_like(vec)
        EPS = self.EPS if EPS is None else EPS
        self.perturb_norm = self.code.norm() * EPS
        eps = self.perturb_norm / vecnorm
        perturb_vecs = self.code.detach() + eps * torch.tensor([1, -1.0]).view(-1, 1) * vec.detach()
        perturb_vecs.requires_grad_(True)
        img = self.model.visualize(perturb_vecs)
        resz_img = self.preprocess(img)
        activs = self.objective(resz_img)
        ftgrad_both = torch.autograd.grad(activs, perturb_vecs, retain_graph=False, create_graph=False, only_inputs=True)[0]  # expect: AG005
        hessian_vec_prod = (ftgrad_both[0, :] - ftgrad_both[1, :]) / (2 * eps)
        return hessian_vec_prod

    def vHv_form(self, vec):
        hessian_vec_prod = self.apply(vec)
        return (hessian_vec_prod * vec).sum()


torch.manual_seed(0)
features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, padding=1))
for p in features.parameters():
    p.requires_grad_(False)


def unit_objective(img):
    return features(img)[:, 2, 8, 8]  # one activation per image in the batch


G = TinyGenerator()
operator = GANForwardHVPOperator(G, torch.randn(1, 8), unit_objective)
print("vHv", operator.vHv_form(torch.randn(1, 8)).item())
