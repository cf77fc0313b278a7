# source: written for bench/holdout17 from RULES.md AG018 (prompt tuning module: a fixed position table wrapped in nn.Parameter with a misspelled keyword)
# symptom: TypeError.*(unexpected keyword|got an unexpected)
"""Soft-prompt tuning of a frozen tiny text encoder: learnable prompt vectors, frozen positions."""
import torch
import torch.nn as nn


class PromptedEncoder(nn.Module):
    def __init__(self, vocab=400, dim=32, n_prompt=4, max_len=32, n_cls=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.tok.weight.requires_grad_(False)
        self.pos = nn.Parameter(torch.randn(max_len, dim) * 0.02, requires_grad=False)
        self.prompt = nn.Parameter(torch.randn(n_prompt, dim) * 0.02)
        self.cls = nn.Linear(dim, n_cls)

    def forward(self, tokens):
        x = self.tok(tokens)
        x = torch.cat([self.prompt.expand(x.size(0), -1, -1), x], dim=1)
        x = x + self.pos[: x.size(1)]
        return self.cls(x.mean(1))


torch.manual_seed(0)
model = PromptedEncoder()
opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
for step in range(3):
    tokens, labels = torch.randint(0, 400, (8, 16)), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, round(loss.item(), 4))
