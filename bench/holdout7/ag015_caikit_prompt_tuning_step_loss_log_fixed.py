# source: https://github.com/caikit/caikit-nlp/pull/258
# symptom: step_loss_log keeps the graph of every step: True
"""Twin (the pull request's fix: `loss_float = loss.detach().float().item()` is what `total_loss` and `step_loss_log`
keep; the logged value is each step's own `loss_val`, as the follow-up commit corrected). caikit-nlp
`PeftPromptTuning._execute_train_loop`: inside the accelerate training loop every step stored the loss tensor itself, `step_loss_log[step_count] = loss`, to be turned into `training_loss_tracker` entries at the end of
the epoch; each stored loss held its step's autograd graph ("keeping it in tensor form can potentially cause memory
issues", the pull request's own words)."""
from contextlib import contextmanager
from datetime import datetime
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import AdamW

torch.manual_seed(0)
graph_kept = False


class Accelerator:
    """Single-device stand-in for `accelerate.Accelerator` (prepare / accumulate / backward)."""

    def __init__(self, gradient_accumulation_steps=1, device_placement=True, mixed_precision="no"):
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def prepare(self, *objects):
        return objects

    @contextmanager
    def accumulate(self, model):
        yield

    def backward(self, loss):
        loss.backward()


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):
    def lr_lambda(step):
        if step < num_warmup_steps:
            return step / max(1, num_warmup_steps)
        return max(0.0, (num_training_steps - step) / max(1, num_training_steps - num_warmup_steps))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


class PromptTunedCausalLM(nn.Module):
    """A frozen tiny causal LM with trainable virtual-token embeddings prepended (what PEFT prompt tuning builds)."""

    def __init__(self, vocab=40, dim=16, num_virtual_tokens=4):
        super().__init__()
        self.config = SimpleNamespace(use_cache=True)
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)
        for p in self.parameters():
            p.requires_grad_(False)
        self.prompt_encoder = nn.Embedding(num_virtual_tokens, dim)
        self.num_virtual_tokens = num_virtual_tokens

    def gradient_checkpointing_enable(self):
        pass

    def forward(self, input_ids, labels):
        prompts = self.prompt_encoder.weight.unsqueeze(0).expand(input_ids.size(0), -1, -1)
        hidden, _ = self.body(torch.cat([prompts, self.embed(input_ids)], dim=1))
        logits = self.lm_head(hidden[:, self.num_virtual_tokens:])
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return SimpleNamespace(loss=loss, logits=logits)


class PeftPromptTuning:
    @staticmethod
    def _execute_train_loop(model, num_epochs, train_dataloader, learning_rate=0.3, accumulate_steps=1,
                            torch_dtype=torch.float32):
        global graph_kept
        optimizer = AdamW(params=model.parameters(), lr=learning_rate)
        lr_scheduler = get_linear_schedule_with_warmup(
            optimizer=optimizer, num_warmup_steps=0, num_training_steps=(len(train_dataloader) * num_epochs))
        model.gradient_checkpointing_enable()
        mixed_precision = "fp16" if torch_dtype == torch.float16 else "no"
        accelerator = Accelerator(gradient_accumulation_steps=accumulate_steps, device_placement=True,
                                  mixed_precision=mixed_precision)
        model.config.use_cache = False
        model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
            model, optimizer, train_dataloader, lr_scheduler)

        training_loss_tracker = []
        step_count = 1
        for epoch in range(num_epochs):
            step_loss_log = {}
            model.train()
            total_loss = 0
            for batch in train_dataloader:
                with accelerator.accumulate(model):
                    outputs = model(**batch)
                    loss = outputs.loss
                    # We are converting loss to float explicitely for later use
                    # keeping it in tensor form can potentially cause memory issues
                    loss_float = loss.detach().float().item()
                    total_loss += loss_float
                    accelerator.backward(loss)
                    optimizer.step()
                    lr_scheduler.step()
                    optimizer.zero_grad()
                    step_loss_log[step_count] = loss_float
                    step_count += 1
            graph_kept = any(torch.is_tensor(v) and v.grad_fn is not None for v in step_loss_log.values())
            print({"loss": loss_float, "epoch": epoch})
            for step, loss_val in step_loss_log.items():
                # Below is added to be propagated and stored as training_metadata
                training_loss_tracker.append(
                    {"epoch": epoch, "step": step, "value": float(loss_val),
                     "timestamp": datetime.isoformat(datetime.now())})
        return {"loss": training_loss_tracker}


loader = [{"input_ids": ids, "labels": ids} for ids in (torch.randint(0, 40, (2, 9)) for _ in range(4))]
metadata = PeftPromptTuning._execute_train_loop(PromptTunedCausalLM(), num_epochs=2, train_dataloader=loader)
print(f"logged {len(metadata['loss'])} step losses")
print(f"step_loss_log keeps the graph of every step: {graph_kept}")
