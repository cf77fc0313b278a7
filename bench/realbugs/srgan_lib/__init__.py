"""Stand-ins for SRGAN's model.py (Generator, Discriminator) and loss.py (GeneratorLoss, TVLoss)."""
