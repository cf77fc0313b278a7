"""A function whose argument's use tells nothing about what it is."""
import torch


def step(thing):
    w = torch.ones(3, requires_grad=True)
    w += thing.frobnicate()  # AG001
