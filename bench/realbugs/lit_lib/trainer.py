"""A minimal stand-in for pytorch_lightning.Trainer.fit: it moves the module to the accelerator and runs its steps."""
import torch


def pick_device():
    # no GPU on this machine: "meta" plays the accelerator, so a tensor left on the CPU is caught the same way
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("meta")


class Trainer:
    def __init__(self, max_steps=2):
        self.max_steps = max_steps
        self.device = pick_device()

    def fit(self, model, batches):
        model = model.to(self.device)
        optimizer = model.configure_optimizers()
        for step, (x, y) in enumerate(batches):
            if step >= self.max_steps:
                break
            loss = model.training_step((x.to(self.device), y.to(self.device)), step)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return model
