# source: written for holdout28 (pattern: prompt-tuning trainer enables the soft prompt's requires_grad in a schedule hook that runs after the forward and before backward, so that step's prompt gradient is None)
# symptom: prompt grad is None after enabling: True
"""Prompt tuning on a frozen toy encoder: first train only the classification
head, then (from step PROMPT_START on) also the soft prompt vectors.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, DIM, N_PROMPT, PROMPT_START = 30, 16, 4, 10


class PromptTuner:
    def __init__(self):
        self.embed = nn.Embedding(VOCAB, DIM).requires_grad_(False)
        self.encoder = nn.TransformerEncoderLayer(DIM, nhead=2, dim_feedforward=32, batch_first=True)
        self.encoder.requires_grad_(False)
        self.prompt = nn.Parameter(0.02 * torch.randn(N_PROMPT, DIM), requires_grad=False)
        self.head = nn.Linear(DIM, 2)
        self.opt = torch.optim.Adam([self.prompt, *self.head.parameters()], lr=1e-2)
        self.step_count = 0
        self.missing_grad = None

    def forward(self, tokens):
        x = self.embed(tokens)
        x = torch.cat([self.prompt.expand(x.shape[0], -1, -1), x], dim=1)
        return self.head(self.encoder(x)[:, 0])

    def schedule_hook(self):
        if self.step_count == PROMPT_START:
            self.prompt.requires_grad_(True)  # expect: AG014

    def training_step(self, tokens, labels):
        loss = F.cross_entropy(self.forward(tokens), labels)
        self.schedule_hook()
        self.opt.zero_grad()
        loss.backward()
        if self.step_count == PROMPT_START:
            self.missing_grad = self.prompt.grad is None
        self.opt.step()
        self.step_count += 1
        return loss.item()


torch.manual_seed(0)
tuner = PromptTuner()
tuner.encoder.eval()
for step in range(20):
    tokens = torch.randint(0, VOCAB, (16, 8))
    labels = (tokens < VOCAB // 2).sum(1).gt(4).long()
    loss = tuner.training_step(tokens, labels)
    if step % 5 == 0:
        print(f"step {step} loss {loss:.4f}")
print(f"prompt grad is None after enabling: {tuner.missing_grad}")
