# source: https://github.com/tenstorrent/tt-blacksmith/pull/711
# symptom: gradients accumulated across \d+ steps: True
# The Trainer class used for LoRA LLM fine-tuning steps the optimizer through its own helper whose zero_grad flag
# defaults to False, and train() never passes it, so gradients are never cleared between optimizer steps.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradWatch:
    """Records, for one parameter, each backward's own gradient (tensor hook) and the .grad left after it."""

    def __init__(self, param):
        self.param, self.fresh, self.after = param, [], []
        param.register_hook(lambda g: self.fresh.append(g.clone()))

    def record(self):
        self.after.append(self.param.grad.clone())

    def report(self):
        accumulated = torch.allclose(self.after[-1], torch.stack(self.fresh).sum(0)) and len(self.fresh) > 1
        print(f"gradients accumulated across {len(self.fresh)} steps: {accumulated}")


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank=2, alpha=4):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad = False
        self.lora_A = nn.Parameter(torch.randn(rank, base.in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


class TinyLM(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = LoRALinear(nn.Linear(dim, dim))
        self.lm_head = nn.Linear(dim, vocab)
        self.lm_head.requires_grad_(False)

    def forward(self, ids):
        return self.lm_head(torch.tanh(self.proj(self.embed(ids))))


class Trainer:
    def __init__(self, model, config):
        self.model = model
        self.config = config
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config["lr"])

    def optimizer_step(self, zero_grad=False):
        self.optimizer.step()  # expect: AG016
        if zero_grad:
            self.optimizer.zero_grad()

    def train_step(self, batch):
        logits = self.model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1))
        loss.backward()
        return loss.item()

    def train(self, train_loader, watch):
        self.model.train()
        for step, batch in enumerate(train_loader):
            loss = self.train_step(batch)
            self.optimizer_step()  # expect: AG016
            watch.record()
            print(f"step {step} loss {loss:.4f}")


model = TinyLM()
model.embed.requires_grad_(False)
trainer = Trainer(model, {"lr": 1e-3})
watch = GradWatch(model.proj.lora_A)
trainer.train([torch.randint(0, 16, (4, 6)) for _ in range(3)], watch)
watch.report()
