# source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/109
# symptom: Trying to backward through the graph a second time
# The user ran the package's Trainer example but first passed the data through an nn.Conv1d "to convert it to the shape
# of the network's input" once, outside the training loop: every batch is a slice of that one graph, freed by step 1.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Dataset1D(Dataset):
    def __init__(self, tensor):
        super().__init__()
        self.tensor = tensor

    def __len__(self):
        return len(self.tensor)

    def __getitem__(self, idx):
        return self.tensor[idx]


class Unet1D(nn.Module):
    def __init__(self, channels=2, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(channels + 1, dim, 3, padding=1), nn.SiLU(), nn.Conv1d(dim, channels, 3, padding=1))

    def forward(self, x, t):
        t_map = t.float().view(-1, 1, 1).expand(-1, 1, x.shape[-1]) / 100
        return self.net(torch.cat([x, t_map], 1))


class GaussianDiffusion1D(nn.Module):
    def __init__(self, model, seq_length, timesteps=100):
        super().__init__()
        self.model = model
        self.seq_length = seq_length
        self.num_timesteps = timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, 0))

    def forward(self, img):
        t = torch.randint(0, self.num_timesteps, (img.shape[0],))
        noise = torch.randn_like(img)
        a = self.alphas_cumprod[t].view(-1, 1, 1)
        x = a.sqrt() * img + (1 - a).sqrt() * noise
        return F.mse_loss(self.model(x, t), noise)


class Trainer1D:
    def __init__(self, diffusion_model, dataset, train_batch_size=4, train_lr=8e-5, train_num_steps=5):
        self.model = diffusion_model
        self.dl = iter(DataLoader(dataset, batch_size=train_batch_size, shuffle=True, drop_last=True))
        self.opt = torch.optim.Adam(diffusion_model.parameters(), lr=train_lr)
        self.train_num_steps = train_num_steps
        self.step = 0

    def train(self):
        while self.step < self.train_num_steps:
            data = next(self.dl)  # expect: AG002
            loss = self.model(data)  # expect: AG002
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
            self.step += 1
            print("step", self.step, loss.item())


torch.manual_seed(0)
raw = torch.rand(64, 1, 32)  # the user's own data, one channel
to_input = nn.Conv1d(1, 2, kernel_size=1)  # "convert my data to the shape of the network's input"
training_seq = to_input(raw)
dataset = Dataset1D(training_seq)
diffusion = GaussianDiffusion1D(Unet1D(channels=2), seq_length=32, timesteps=100)
Trainer1D(diffusion, dataset, train_batch_size=4, train_num_steps=5).train()
