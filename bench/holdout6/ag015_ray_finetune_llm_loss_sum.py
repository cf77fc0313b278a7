# source: https://github.com/ray-project/ray/pull/40940
# symptom: loss_sum keeps the graph of every step: True
"""Ray's `finetune_hf_llm.py` template: the per-worker `training_function` runs a causal-LM fine-tuning loop
(forward on the batch dict, `outputs.loss`, backward, optimizer and scheduler steps) and keeps `loss_sum += loss`
for the epoch's mean loss, so the graph of every step stays referenced until the epoch ends."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CausalLMOutput:
    def __init__(self, loss, logits):
        self.loss = loss
        self.logits = logits


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=50, dim=32, heads=4, layers=2, max_len=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=64, batch_first=True, dropout=0.0)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask=None, labels=None):
        t = input_ids.size(1)
        h = self.embed(input_ids) + self.pos(torch.arange(t))
        causal = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        h = self.blocks(h, mask=causal)
        logits = self.lm_head(h)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return CausalLMOutput(loss, logits)


def get_batches(num_batches, batch_size=4, seq_len=16, vocab=50):
    for _ in range(num_batches):
        ids = torch.randint(0, vocab, (batch_size, seq_len))
        yield {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}


def training_function(kwargs):
    config = kwargs["config"]
    model = TinyCausalLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 4))
    kept_graph = False
    for epoch in range(config["num_epochs"]):
        model.train()
        loss_sum = torch.tensor(0.0)
        for step, batch in enumerate(get_batches(config["steps_per_epoch"])):
            outputs = model(**batch)
            loss = outputs.loss
            loss_sum += loss  # expect: AG015
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
        kept_graph = kept_graph or loss_sum.grad_fn is not None
        perplexity = math.exp(loss_sum.item() / (step + 1))
        print(f"epoch {epoch} | mean loss {loss_sum.item() / (step + 1):.4f} | perplexity {perplexity:.2f}")
    print(f"loss_sum keeps the graph of every step: {kept_graph}")


training_function({"config": {"lr": 1e-3, "num_epochs": 2, "steps_per_epoch": 5}})
