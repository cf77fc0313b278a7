# source: written for holdout25 (pattern: notebook-style training cell sums the loss tensor into running_loss for the epoch average)
# symptom: loss keeps graph of every batch: True
"""Autoencoder on random 'images', written as a notebook exported to a script."""
import torch
import torch.nn as nn

torch.manual_seed(0)

# %% data
images = torch.rand(512, 64)
loader = [images[i:i + 32] for i in range(0, 512, 32)]

# %% model
encoder = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8))
decoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 64), nn.Sigmoid())
params = list(encoder.parameters()) + list(decoder.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)
criterion = nn.BCELoss()

# %% train
history = []
for epoch in range(4):
    running_loss = 0.0
    for batch in loader:
        recon = decoder(encoder(batch))
        loss = criterion(recon, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running_loss += loss  # expect: AG015
    epoch_loss = running_loss / len(loader)
    history.append(float(epoch_loss))
    print(f"epoch {epoch}: {history[-1]:.4f}")

# %% sanity
print("loss keeps graph of every batch:", epoch_loss.grad_fn is not None)
