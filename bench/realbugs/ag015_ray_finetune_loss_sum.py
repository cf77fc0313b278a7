# source: https://github.com/ray-project/ray/pull/40940
# symptom: loss_sum still has a graph: True
# finetune_hf_llm.py's training_function sums the step losses for its log line with loss_sum += loss, so the sum
# holds every step's graph for the whole epoch (the leak the PR fixes with loss.item()).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def graph_size(t):
    seen, stack = set(), [getattr(t, "grad_fn", None)]
    while stack:
        f = stack.pop()
        if f is not None and f not in seen:
            seen.add(f)
            stack.extend(g for g, _ in f.next_functions)
    return len(seen)


class CausalLMOutput:
    def __init__(self, loss, logits):
        self.loss = loss
        self.logits = logits


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        logits = self.lm_head(torch.tanh(self.embed(input_ids)))
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return CausalLMOutput(loss, logits)


def training_function(kwargs: dict):
    model = TinyCausalLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=kwargs["lr"])
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    train_dataloader = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 20, (6, 4, 8))]
    for epoch in range(kwargs["num_epochs"]):
        loss_sum = torch.tensor(0.0)
        model.train()
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            loss_sum += loss  # expect: AG015
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            print(f"[epoch {epoch} step {step}] loss: {loss.item():.3f} avg: {loss_sum.item() / (step + 1):.3f}")
        print("loss_sum still has a graph:", loss_sum.grad_fn is not None, "| nodes reachable:", graph_size(loss_sum))


training_function({"lr": 1e-3, "num_epochs": 1})
