# source: https://github.com/thuml/Anomaly-Transformer/issues/1
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""Anomaly-Transformer `Solver.train`, minimax strategy: `loss1.backward(retain_graph=True)`, `self.optimizer.step()`,
then `loss2.backward()` through the same retained graph, whose saved weights the step has just changed in place."""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def my_kl_loss(p, q):
    res = p * (torch.log(p + 0.0001) - torch.log(q + 0.0001))
    return torch.mean(torch.sum(res, dim=-1), dim=1)


class AnomalyAttention(nn.Module):
    def __init__(self, win_size, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.sigma = nn.Linear(d_model, n_heads)
        self.out = nn.Linear(d_model, d_model)
        idx = torch.arange(win_size, dtype=torch.float32)
        self.register_buffer("distances", (idx[:, None] - idx[None, :]).abs())

    def forward(self, x):
        B, L, _ = x.shape
        H = self.n_heads
        q = self.query(x).view(B, L, H, self.d_k).transpose(1, 2)
        k = self.key(x).view(B, L, H, self.d_k).transpose(1, 2)
        v = self.value(x).view(B, L, H, self.d_k).transpose(1, 2)
        series = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d_k), dim=-1)
        sigma = torch.sigmoid(self.sigma(x) * 5) + 1e-5
        sigma = torch.pow(3, sigma) - 1
        sigma = sigma.transpose(1, 2).unsqueeze(-1).repeat(1, 1, 1, L)  # B H L L
        prior = 1.0 / (math.sqrt(2 * math.pi) * sigma) * torch.exp(-self.distances ** 2 / 2 / (sigma ** 2))
        out = (series @ v).transpose(1, 2).reshape(B, L, -1)
        return self.out(out), series, prior, sigma


class AnomalyTransformer(nn.Module):
    def __init__(self, win_size, enc_in, c_out, d_model=16, n_heads=2, e_layers=2):
        super().__init__()
        self.embedding = nn.Linear(enc_in, d_model)
        self.attn_layers = nn.ModuleList([AnomalyAttention(win_size, d_model, n_heads) for _ in range(e_layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(d_model) for _ in range(e_layers)])
        self.projection = nn.Linear(d_model, c_out)

    def forward(self, x):
        x = self.embedding(x)
        series_list, prior_list, sigma_list = [], [], []
        for attn, norm in zip(self.attn_layers, self.norms):
            new_x, series, prior, sigma = attn(x)
            x = norm(x + new_x)
            series_list.append(series)
            prior_list.append(prior)
            sigma_list.append(sigma)
        return self.projection(x), series_list, prior_list, sigma_list


class Solver(object):
    def __init__(self, win_size=16, input_c=3, num_epochs=2, k=3, lr=1e-4):
        self.win_size, self.num_epochs, self.k = win_size, num_epochs, k
        self.device = torch.device("cpu")
        self.model = AnomalyTransformer(win_size=win_size, enc_in=input_c, c_out=input_c)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.criterion = nn.MSELoss()
        data = torch.randn(32, win_size, input_c)
        self.train_loader = [(data[i:i + 8], torch.zeros(8)) for i in range(0, 32, 8)]

    def train(self):
        for epoch in range(self.num_epochs):
            iter_count = 0
            loss1_list = []
            epoch_time = time.time()
            self.model.train()
            for i, (input_data, labels) in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                iter_count += 1
                input = input_data.float().to(self.device)
                output, series, prior, _ = self.model(input)

                # calculate Association discrepancy
                series_loss = 0.0
                prior_loss = 0.0
                for u in range(len(prior)):
                    norm_prior = prior[u] / torch.unsqueeze(torch.sum(prior[u], dim=-1), dim=-1).repeat(1, 1, 1, self.win_size)
                    series_loss += (torch.mean(my_kl_loss(series[u], norm_prior.detach()))
                                    + torch.mean(my_kl_loss(norm_prior.detach(), series[u])))
                    prior_loss += (torch.mean(my_kl_loss(norm_prior, series[u].detach()))
                                   + torch.mean(my_kl_loss(series[u].detach(), norm_prior)))
                series_loss = series_loss / len(prior)
                prior_loss = prior_loss / len(prior)

                rec_loss = self.criterion(output, input)
                loss1_list.append((rec_loss - self.k * series_loss).item())
                loss1 = rec_loss - self.k * series_loss
                loss2 = rec_loss + self.k * prior_loss

                # Minimax strategy
                loss1.backward(retain_graph=True)  # expect: AG003
                self.optimizer.step()
                loss2.backward()  # expect: AG003
                self.optimizer.step()

            train_loss = sum(loss1_list) / len(loss1_list)
            print("Epoch: {0}, Steps: {1} | Train Loss: {2:.7f} | cost time: {3:.2f}s".format(
                epoch + 1, iter_count, train_loss, time.time() - epoch_time))


Solver().train()
