# source: https://github.com/OpenRLHF/OpenRLHF/pull/145
# symptom: grad can be implicitly created only for scalar outputs
"""Twin (the pull request's fix: `loss = losses.mean()` returned from `DPOLoss.forward`). OpenRLHF `models/loss.py` +
`trainer/dpo_trainer.py`: `DPOLoss.forward` returned the per-pair `losses =
-F.logsigmoid(self.beta * logits)` (shape [batch]) and `DPOTrainer.fit` handed it to `self.strategy.backward(loss,
...)`, which called `loss.backward()` on the vector."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DPOLoss(nn.Module):
    """
    DPO Loss
    """

    def __init__(self, beta: float = None) -> None:
        super().__init__()
        self.beta = beta

    def forward(self, policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps):
        pi_logratios = policy_chosen_logps - policy_rejected_logps
        ref_logratios = reference_chosen_logps - reference_rejected_logps

        logits = pi_logratios - ref_logratios
        losses = -F.logsigmoid(self.beta * logits)
        loss = losses.mean()
        chosen_rewards = self.beta * (policy_chosen_logps - reference_chosen_logps).detach()
        rejected_rewards = self.beta * (policy_rejected_logps - reference_rejected_logps).detach()

        return loss, chosen_rewards, rejected_rewards


class Actor(nn.Module):
    """Tiny causal LM standing in for the HF actor: returns a dict with "logits"."""

    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask=None, return_output=True):
        hidden, _ = self.rnn(self.embed(input_ids))
        return {"logits": self.head(hidden)}


class Strategy:
    """Single-process stand-in for the DeepSpeed strategy."""

    def backward(self, loss, model, optimizer):
        loss.backward()

    def optimizer_step(self, optimizer, model, scheduler):
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()


class Tokenizer:
    pad_token_id = 0


class DPOTrainer:
    def __init__(self, model, ref_model, strategy, tokenizer, optim, train_dataloader, scheduler, beta=0.01, max_epochs=1):
        self.model, self.ref_model, self.strategy, self.tokenizer = model, ref_model, strategy, tokenizer
        self.optimizer, self.train_dataloader, self.scheduler = optim, train_dataloader, scheduler
        self.beta, self.epochs = beta, max_epochs
        self.loss_fn = DPOLoss(self.beta)

    def fit(self):
        for epoch in range(self.epochs):
            self.model.train()
            self.ref_model.eval()
            acc_mean = 0
            loss_mean = 0
            for chosen_ids, c_mask, reject_ids, r_mask, _ in self.train_dataloader:
                chosen_logps, rejected_logps = self.concatenated_forward(self.model, chosen_ids, c_mask, reject_ids, r_mask)
                with torch.no_grad():
                    reference_chosen_logps, reference_rejected_logps = self.concatenated_forward(
                        self.ref_model, chosen_ids, c_mask, reject_ids, r_mask)
                loss, chosen_reward, reject_reward = self.loss_fn(
                    chosen_logps, rejected_logps, reference_chosen_logps, reference_rejected_logps)

                self.strategy.backward(loss, self.model, self.optimizer)
                self.strategy.optimizer_step(self.optimizer, self.model, self.scheduler)

                acc_mean = acc_mean * 0.9 + 0.1 * (chosen_reward > reject_reward).float().mean().item()
                loss_mean = loss_mean * 0.9 + 0.1 * loss.item()
                print({"train_loss": loss.item(), "acc_mean": acc_mean, "loss_mean": loss_mean})

    def concatenated_forward(self, model, chosen_ids, c_mask, reject_ids, r_mask):
        input_ids = torch.cat((chosen_ids, reject_ids), dim=0)
        att_masks = torch.cat((c_mask, r_mask), dim=0)
        all_logits = model(input_ids, attention_mask=att_masks, return_output=True)["logits"]
        all_logps = self._get_batch_logps(all_logits, input_ids, average_log_prob=False)
        return all_logps[: chosen_ids.shape[0]], all_logps[chosen_ids.shape[0]:]

    def _get_batch_logps(self, logits, labels, average_log_prob=False):
        assert logits.shape[:-1] == labels.shape
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        loss_mask = labels != self.tokenizer.pad_token_id
        # dummy token; we'll ignore the losses on these tokens later
        labels[labels == self.tokenizer.pad_token_id] = 0
        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        return (per_token_logps * loss_mask).sum(-1)


model, ref_model = Actor(), Actor()
ref_model.load_state_dict(model.state_dict())
optim = torch.optim.Adam(model.parameters(), lr=5e-4)
scheduler = torch.optim.lr_scheduler.LambdaLR(optim, lambda step: 1.0)
batches = []
for _ in range(2):
    chosen, reject = torch.randint(1, 32, (2, 8)), torch.randint(1, 32, (2, 8))
    batches.append((chosen, torch.ones_like(chosen), reject, torch.ones_like(reject), None))
DPOTrainer(model, ref_model, Strategy(), Tokenizer(), optim, batches, scheduler).fit()
