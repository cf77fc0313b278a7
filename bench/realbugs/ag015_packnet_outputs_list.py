# source: https://github.com/TRI-ML/packnet-sfm/pull/51
# symptom: outputs holding a graph: [1-9]\d* of \d+
# HorovodTrainer.train appends every training_step output dict, whose 'loss' is the undetached loss tensor, to the
# epoch's outputs list for training_epoch_end; each batch's graph stays alive for the whole epoch (fix: detach).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AvgMeter:
    def __init__(self, n_max=50):
        self.values = []
        self.n_max = n_max

    def __call__(self, value):
        self.values = (self.values + [value])[-self.n_max:]
        return sum(self.values) / len(self.values)


class SelfSupModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.depth_net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1), nn.Sigmoid())
        self.current_epoch = 0

    def configure_optimizers(self):
        self.optimizer = torch.optim.Adam(self.depth_net.parameters(), lr=2e-4)

    def training_step(self, batch, *args):
        inv_depth = self.depth_net(batch["rgb"])
        photometric = F.l1_loss(batch["rgb"] * inv_depth, batch["rgb_context"])
        smoothness = (inv_depth[..., 1:] - inv_depth[..., :-1]).abs().mean()
        loss = photometric + 0.001 * smoothness
        return {"loss": loss, "metrics": {"photometric": photometric.detach()}}

    def training_epoch_end(self, output_batch):
        avg = torch.stack([o["loss"] for o in output_batch]).mean()
        return {"avg_train-loss": avg}


class HorovodTrainer:
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs
        self.avg_loss = AvgMeter(50)

    def train(self, dataloader, module, optimizer):
        module.train()
        outputs = []
        for i, batch in enumerate(dataloader):
            optimizer.zero_grad()
            output = module.training_step(batch, i)
            output["loss"].backward()
            optimizer.step()
            outputs.append(output)  # expect: AG015
            print("Epoch {} | Avg.Loss {:.4f}".format(module.current_epoch, self.avg_loss(output["loss"].item())))
        kept = sum(o["loss"].grad_fn is not None for o in outputs)
        print(f"outputs holding a graph: {kept} of {len(outputs)}")
        return module.training_epoch_end(outputs)


module = SelfSupModel()
module.configure_optimizers()
dataloader = [{"rgb": torch.rand(2, 3, 8, 8), "rgb_context": torch.rand(2, 3, 8, 8)} for _ in range(4)]
HorovodTrainer().train(dataloader, module, module.optimizer)
