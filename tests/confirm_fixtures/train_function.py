"""A library-like module: nothing calls train(); confirming must synthesize its arguments."""
import torch


def train(model, optimizer, loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()  # AG016: no zero_grad() anywhere
