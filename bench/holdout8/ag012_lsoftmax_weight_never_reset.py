# source: https://github.com/amirhfarzaneh/lsoftmax-pytorch/issues/7
# symptom: LSoftmax weight read before reset_parameters\(\): True
"""lsoftmax-pytorch: LSoftmaxLinear.__init__ allocates its weight with
nn.Parameter(torch.FloatTensor(input_features, output_features)) and has a reset_parameters() method, but
__init__ never calls it, so the first forward reads uninitialised memory ("the weight is just zeros and
the loss goes to nan").

Written for bench/holdout8 with the structure of the repository's lsoftmax.py (the margin expansion of
cos(m*theta), find_k, the beta annealing in forward) and an MNIST-style network whose last layer is the
L-Softmax layer, trained a few steps on random 28x28 images. The margin constants are registered buffers
here instead of the repository's plain tensor attributes. The program keeps a flag set by
reset_parameters() to report whether the weight was initialised before its first use.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LSoftmaxLinear(nn.Module):
    def __init__(self, input_features, output_features, margin, device):
        super().__init__()
        self.input_dim = input_features
        self.output_dim = output_features
        self.margin = margin
        self.beta = 100
        self.beta_min = 0
        self.scale = 0.99
        self.device = device
        self.initialised = False
        self.weight = nn.Parameter(torch.FloatTensor(input_features, output_features))  # expect: AG012
        self.divisor = math.pi / self.margin
        self.register_buffer("C_m_2n", torch.tensor([float(math.comb(margin, k)) for k in range(0, margin + 1, 2)]))
        self.register_buffer("cos_powers", torch.tensor([float(p) for p in range(self.margin, -1, -2)]))
        self.register_buffer("sin2_powers", torch.tensor([float(p) for p in range(0, self.margin + 1, 2)]))
        signs = torch.ones(margin // 2 + 1)
        signs[1::2] = -1
        self.register_buffer("signs", signs)

    def calculate_cos_m_theta(self, cos_theta):
        sin2_theta = 1 - cos_theta ** 2
        cos_terms = cos_theta.unsqueeze(1) ** self.cos_powers.unsqueeze(0)
        sin2_terms = sin2_theta.unsqueeze(1) ** self.sin2_powers.unsqueeze(0)
        return (self.signs.unsqueeze(0) * self.C_m_2n.unsqueeze(0) * cos_terms * sin2_terms).sum(1)

    def reset_parameters(self):
        nn.init.kaiming_normal_(self.weight.data.t())
        self.initialised = True

    def find_k(self, cos):
        eps = 1e-7
        cos = torch.clamp(cos, -1 + eps, 1 - eps)
        acos = cos.acos()
        return (acos / self.divisor).floor().detach()

    def forward(self, input, target=None):
        if self.training:
            assert target is not None
            x, w = input, self.weight
            beta = max(self.beta, self.beta_min)
            logit = x.mm(w)
            indexes = range(logit.size(0))
            logit_target = logit[indexes, target]
            w_target_norm = w[:, target].norm(p=2, dim=0)
            x_norm = x.norm(p=2, dim=1)
            cos_theta_target = logit_target / (w_target_norm * x_norm + 1e-10)
            cos_m_theta_target = self.calculate_cos_m_theta(cos_theta_target)
            k = self.find_k(cos_theta_target)
            logit_target_updated = w_target_norm * x_norm * (((-1) ** k * cos_m_theta_target) - 2 * k)
            logit_target_updated_beta = (logit_target_updated + beta * logit[indexes, target]) / (1 + beta)
            logit[indexes, target] = logit_target_updated_beta
            self.beta *= self.scale
            return logit
        return input.mm(self.weight)


class MNISTNet(nn.Module):
    def __init__(self, margin, device):
        super().__init__()
        self.margin = margin
        self.device = device
        self.conv_0 = nn.Sequential(nn.BatchNorm2d(1), nn.Conv2d(1, 8, 3, padding=1), nn.PReLU(), nn.BatchNorm2d(8))
        self.conv_1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.PReLU(), nn.BatchNorm2d(8), nn.MaxPool2d(4))
        self.fc = nn.Sequential(nn.Linear(8 * 7 * 7, 32), nn.BatchNorm1d(32))
        self.lsoftmax_linear = LSoftmaxLinear(input_features=32, output_features=10, margin=margin, device=self.device)

    def forward(self, x, target=None):
        x = self.conv_1(self.conv_0(x))
        x = self.fc(x.view(-1, 8 * 7 * 7))
        return self.lsoftmax_linear(input=x, target=target)


def main():
    torch.manual_seed(0)
    device = torch.device("cpu")
    model = MNISTNet(margin=2, device=device)
    read_before_init = not model.lsoftmax_linear.initialised
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    model.train()
    for batch_idx in range(3):
        data = torch.rand(16, 1, 28, 28)
        target = torch.randint(0, 10, (16,))
        optimizer.zero_grad()
        output = model(data, target=target)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        print(f"Train step {batch_idx}: loss {loss.item():.4f}")
    print("LSoftmax weight read before reset_parameters():", read_before_init)


if __name__ == "__main__":
    main()
