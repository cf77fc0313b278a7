# source: written for bench/holdout16 from RULES.md AG005 (plain loop, criterion built with reduction="none" from a config dict, per-sample weighting)
# symptom: grad can be implicitly created only for scalar outputs
"""Speech enhancement: a small conv net predicts a spectral mask; per-utterance loss weighted by SNR."""
import torch
import torch.nn as nn

torch.manual_seed(0)
config = {"lr": 3e-4, "epochs": 2, "loss_reduction": "none"}

net = nn.Sequential(nn.Conv1d(40, 64, 3, padding=1), nn.ReLU(), nn.Conv1d(64, 40, 3, padding=1), nn.Sigmoid())
criterion = nn.L1Loss(reduction=config["loss_reduction"])
optimizer = torch.optim.Adam(net.parameters(), lr=config["lr"])

for epoch in range(config["epochs"]):
    for _ in range(3):
        clean = torch.rand(8, 40, 50)
        noise = torch.rand(8, 40, 50) * torch.rand(8, 1, 1)
        snr_weight = 1.0 / (noise.mean((1, 2)) + 0.1)
        noisy = clean + noise
        optimizer.zero_grad()
        enhanced = net(noisy) * noisy
        per_utt = criterion(enhanced, clean).mean((1, 2))
        loss = per_utt * snr_weight / snr_weight.sum()
        loss.backward()  # expect: AG005
        optimizer.step()
    print(f"epoch {epoch} loss {loss.sum().item():.4f}")
