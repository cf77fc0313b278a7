# source: https://github.com/TRI-ML/packnet-sfm/pull/51
# symptom: epoch outputs keep the graph of every step: True
"""packnet-sfm `HorovodTrainer.train` (before the PR): each step's `output = module.training_step(batch, i)`
is back-propagated, the optimizer steps, and the whole output dict, with its `loss` still attached to the graph,
is appended to `outputs` for `module.training_epoch_end(outputs)`, so every step's graph lives until epoch end."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.dec = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, rgb):
        return F.softplus(self.dec(self.enc(rgb)))


class SelfSupModel(nn.Module):
    """Photometric loss between the target image and a (fake) warp of the context image by the predicted depth."""

    def __init__(self):
        super().__init__()
        self.depth_net = DepthNet()

    def forward(self, batch):
        depth = self.depth_net(batch["rgb"])
        warped = batch["rgb_context"] * (1.0 / (1.0 + depth))
        photometric = (warped - batch["rgb"]).abs().mean()
        smoothness = (depth[..., 1:] - depth[..., :-1]).abs().mean()
        return {"loss": photometric + 1e-3 * smoothness, "metrics": {"photometric_loss": photometric.detach()}}


class ModelWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.current_epoch = 0

    def training_step(self, batch, *args):
        output = self.model(batch)
        return {"loss": output["loss"], "metrics": output["metrics"]}

    def training_epoch_end(self, output_batch):
        avg_loss = torch.stack([x["loss"] for x in output_batch]).mean().item()
        return {"avg_train-loss": avg_loss}


class HorovodTrainer:
    def __init__(self, max_epochs=2):
        self.max_epochs = max_epochs
        self.kept_graph = False

    def train(self, dataloader, module, optimizer):
        module.train()
        outputs = []
        for i, batch in enumerate(dataloader):
            optimizer.zero_grad()
            output = module.training_step(batch, i)
            output["loss"].backward()
            optimizer.step()
            outputs.append(output)  # expect: AG015
        self.kept_graph = self.kept_graph or any(o["loss"].grad_fn is not None for o in outputs)
        return module.training_epoch_end(outputs)

    def fit(self, module, dataloader):
        optimizer = torch.optim.Adam(module.parameters(), lr=2e-4)
        for epoch in range(module.current_epoch, self.max_epochs):
            print(f"epoch {epoch}", self.train(dataloader, module, optimizer))
            module.current_epoch += 1
        print(f"epoch outputs keep the graph of every step: {self.kept_graph}")


loader = [{"rgb": torch.rand(2, 3, 16, 16), "rgb_context": torch.rand(2, 3, 16, 16)} for _ in range(3)]
HorovodTrainer().fit(ModelWrapper(SelfSupModel()), loader)
