# source: https://github.com/microsoft/nni/pull/4307
# symptom: sparsity penalty reaches the BN weights: False
"""NNI SlimPruner (compression v2): `criterion_patch` adds `scale * sum(|gamma|_1)` over the wrapped BatchNorm layers to
the training loss, but reads `wrapper.module.weight.data`, so the penalty is a constant to autograd and the BatchNorm
scales are never pushed towards zero (the PR: "The criterion patch in SlimPruner V2 is invalid")."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NaiveModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class PrunerModuleWrapper(nn.Module):
    def __init__(self, module, module_name, config):
        super().__init__()
        self.module, self.name, self.config = module, module_name, config
        self.register_buffer('weight_mask', torch.ones_like(module.weight))

    def forward(self, *inputs):
        return self.module(*inputs)


class SlimPruner:
    def __init__(self, model, config_list, trainer, optimizer, criterion, training_epochs, scale=0.0001):
        self.bound_model = model
        self.config_list = config_list
        self.trainer, self.optimizer, self.criterion = trainer, optimizer, criterion
        self.training_epochs = training_epochs
        self._scale = scale
        self._wrappers = {name: PrunerModuleWrapper(m, name, config_list[0])
                          for name, m in model.named_modules() if type(m).__name__ in config_list[0]['op_types']}

    def get_modules_wrapper(self):
        return self._wrappers

    def criterion_patch(self, criterion):
        def patched_criterion(input_tensor, target):
            sum_l1 = 0
            for _, wrapper in self.get_modules_wrapper().items():
                sum_l1 += torch.norm(wrapper.module.weight.data, p=1)  # expect: AG008
            return criterion(input_tensor, target) + self._scale * sum_l1
        return patched_criterion

    def collect_data(self):
        patched = self.criterion_patch(self.criterion)
        for _ in range(self.training_epochs):
            self.trainer(self.bound_model, self.optimizer, patched)
        return {name: w.module.weight.detach().abs() for name, w in self._wrappers.items()}

    def compress(self):
        metrics = self.collect_data()
        all_scales = torch.cat(list(metrics.values()))
        threshold = torch.quantile(all_scales, self.config_list[0]['total_sparsity'])
        for name, wrapper in self._wrappers.items():
            wrapper.weight_mask.copy_((metrics[name] > threshold).float())
        return self.bound_model, {name: w.weight_mask for name, w in self._wrappers.items()}


images = torch.randn(64, 1, 8, 8)
labels = torch.randint(0, 4, (64,))
train_loader = [(images[i:i + 16], labels[i:i + 16]) for i in range(0, 64, 16)]


def trainer(model, optimizer, criterion):
    model.train()
    for data, target in train_loader:
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()


def penalty_reaches_bn(model, criterion, patched, data, target):
    gammas = [m.weight for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    output = model(data)
    plain = torch.autograd.grad(criterion(output, target), gammas, retain_graph=True)
    with_penalty = torch.autograd.grad(patched(output, target), gammas)
    return any(not torch.allclose(a, b) for a, b in zip(plain, with_penalty))


model = NaiveModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = F.cross_entropy
config_list = [{'total_sparsity': 0.5, 'op_types': ['BatchNorm2d']}]
pruner = SlimPruner(model, config_list, trainer, optimizer, criterion, training_epochs=2, scale=0.1)
_, masks = pruner.compress()
print("kept channels:", {name: int(mask.sum()) for name, mask in masks.items()})
reaches = penalty_reaches_bn(model, criterion, pruner.criterion_patch(criterion), *train_loader[0])
print(f"sparsity penalty reaches the BN weights: {reaches}")
