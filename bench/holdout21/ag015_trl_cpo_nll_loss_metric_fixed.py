# source: https://github.com/huggingface/trl/commit/363369a71721baf6607385e9ce1cc686833c8e7b
# symptom: stored nll_loss metrics keep the graph: True
"""huggingface/trl trl/trainer/cpo_trainer.py after #1531 (fixed): the NLL metric is stored
detached, `metrics["nll_loss"] = policy_nll_loss.detach().mean().cpu()`, so the values that
`store_metrics` keeps until the next log hold no autograd graph."""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=16, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask=None):
        h, _ = self.rnn(self.embed(input_ids))
        return self.lm_head(h)


class CPOTrainer:
    def __init__(self, model, optimizer, beta=0.1, label_smoothing=0.0, loss_type="sigmoid",
                 label_pad_token_id=-100, logging_steps=4):
        self.model = model
        self.optimizer = optimizer
        self.beta = beta
        self.label_smoothing = label_smoothing
        self.loss_type = loss_type
        self.label_pad_token_id = label_pad_token_id
        self.logging_steps = logging_steps
        self._stored_metrics = defaultdict(lambda: defaultdict(list))
        self.log_history = []

    @staticmethod
    def concatenated_inputs(batch):
        return {"concatenated_input_ids": torch.cat([batch["chosen_input_ids"], batch["rejected_input_ids"]]),
                "concatenated_labels": torch.cat([batch["chosen_labels"], batch["rejected_labels"]])}

    def get_batch_logps(self, logits, labels, average_log_prob=False):
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        loss_mask = labels != self.label_pad_token_id
        labels[labels == self.label_pad_token_id] = 0
        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        return (per_token_logps * loss_mask).sum(-1)

    def concatenated_forward(self, model, batch):
        concatenated_batch = self.concatenated_inputs(batch)
        len_chosen = batch["chosen_labels"].shape[0]
        all_logits = model(concatenated_batch["concatenated_input_ids"])

        def cross_entropy_loss(logits, labels):
            logits = logits[..., :-1, :].contiguous()
            labels = labels[..., 1:].contiguous()
            loss_fct = nn.CrossEntropyLoss()
            return loss_fct(logits.view(-1, logits.shape[-1]), labels.view(-1))

        labels = concatenated_batch["concatenated_labels"].clone()
        nll_loss = cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen])
        all_logps = self.get_batch_logps(all_logits, concatenated_batch["concatenated_labels"],
                                         average_log_prob=self.loss_type == "ipo")
        return (all_logps[:len_chosen], all_logps[len_chosen:], all_logits[:len_chosen],
                all_logits[len_chosen:], nll_loss)

    def cpo_loss(self, policy_chosen_logps, policy_rejected_logps):
        logits = policy_chosen_logps - policy_rejected_logps
        losses = (-F.logsigmoid(self.beta * logits) * (1 - self.label_smoothing)
                  - F.logsigmoid(-self.beta * logits) * self.label_smoothing)
        chosen_rewards = self.beta * policy_chosen_logps.detach()
        rejected_rewards = self.beta * policy_rejected_logps.detach()
        return losses, chosen_rewards, rejected_rewards

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        metrics = {}
        (policy_chosen_logps, policy_rejected_logps, policy_chosen_logits, policy_rejected_logits,
         policy_nll_loss) = self.concatenated_forward(model, batch)
        losses, chosen_rewards, rejected_rewards = self.cpo_loss(policy_chosen_logps, policy_rejected_logps)
        loss = losses.mean() + policy_nll_loss
        reward_accuracies = (chosen_rewards > rejected_rewards).float()
        prefix = "eval_" if train_eval == "eval" else ""
        metrics[f"{prefix}rewards/chosen"] = chosen_rewards.mean().cpu()
        metrics[f"{prefix}rewards/rejected"] = rejected_rewards.mean().cpu()
        metrics[f"{prefix}rewards/accuracies"] = reward_accuracies.mean().cpu()
        metrics[f"{prefix}logps/chosen"] = policy_chosen_logps.detach().mean().cpu()
        metrics[f"{prefix}logits/chosen"] = policy_chosen_logits.detach().mean().cpu()
        metrics[f"{prefix}nll_loss"] = policy_nll_loss.detach().mean().cpu()
        return loss, metrics

    def compute_loss(self, model, inputs):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        self.store_metrics(metrics, train_eval="train")
        return loss

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)

    def log(self, logs):
        train_eval = "train" if "loss" in logs else "eval"
        for key, metrics in self._stored_metrics[train_eval].items():
            logs[key] = torch.stack(metrics).mean().item()
        del self._stored_metrics[train_eval]
        self.log_history.append(logs)

    def train(self, batches):
        self.model.train()
        kept = False
        for step, inputs in enumerate(batches, start=1):
            self.optimizer.zero_grad()
            loss = self.compute_loss(self.model, inputs)
            loss.backward()
            self.optimizer.step()
            stored = self._stored_metrics["train"]["nll_loss"]
            kept = kept or (len(stored) > 1 and all(v.grad_fn is not None for v in stored))
            if step % self.logging_steps == 0:
                self.log({"loss": loss.item()})
        return kept


def main():
    torch.manual_seed(0)
    model = TinyCausalLM()
    trainer = CPOTrainer(model, torch.optim.AdamW(model.parameters(), lr=1e-3))
    batches = []
    for _ in range(8):
        chosen = torch.randint(0, 16, (2, 6))
        rejected = torch.randint(0, 16, (2, 6))
        batches.append({"chosen_input_ids": chosen, "chosen_labels": chosen.clone(),
                        "rejected_input_ids": rejected, "rejected_labels": rejected.clone()})
    kept = trainer.train(batches)
    print('last log', trainer.log_history[-1]["loss"])
    print('stored nll_loss metrics keep the graph:', kept)


if __name__ == '__main__':
    main()
