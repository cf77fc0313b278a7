# source: https://github.com/NVIDIA/DeepLearningExamples/issues/1102
# symptom: average_loss keeps the graph of every step: True
"""Fixed twin: the fix proposed in the thread and merged (pull request #1104): the loss is detached before it is
added into the device stat, `stats.device_stat('average_loss').add_(loss.detach())`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(42)


class SyncFreeStats:
    def __init__(self):
        self.host_stats = {}
        self.device_stats = {}
        self.device_funcs = {}

    def add_stat(self, name, dtype=torch.int32, device_tensor=None, device_func=None):
        if device_tensor is not None:
            assert device_tensor.dtype == dtype
            assert device_tensor.device.type == 'cpu'
            self.host_stats[name] = torch.zeros(1, dtype=dtype)
            self.device_stats[name] = device_tensor
        else:
            self.host_stats[name] = torch.zeros(1, dtype=dtype)
            self.device_stats[name] = None
        self.device_funcs[name] = device_func

    def copy_from_device(self):
        for name in self.host_stats.keys():
            # Apply device function to device stat
            if self.device_stats[name] is not None and self.device_funcs[name] is not None:
                self.host_stats[name].copy_(self.device_funcs[name](self.device_stats[name]), non_blocking=True)
            elif self.device_stats[name] is not None:
                self.host_stats[name].copy_(self.device_stats[name], non_blocking=True)
            elif self.device_funcs[name] is not None:
                self.host_stats[name].copy_(self.device_funcs[name](), non_blocking=True)

    def host_stat_value(self, name):
        assert name in self.host_stats
        return self.host_stats[name].item()

    def device_stat(self, name):
        assert self.device_stats[name] is not None
        return self.device_stats[name]


class TinyBertForPreTraining(nn.Module):
    def __init__(self, vocab=64, hidden=32):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.TransformerEncoderLayer(hidden, nhead=2, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.mlm_head = nn.Linear(hidden, vocab)
        self.nsp_head = nn.Linear(hidden, 2)

    def forward(self, input_ids, masked_lm_labels):
        h = self.encoder(self.embeddings(input_ids))
        return self.mlm_head(h), self.nsp_head(h[:, 0])


class BertPretrainingCriterion(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.vocab_size = vocab_size

    def forward(self, prediction_scores, seq_relationship_score, masked_lm_labels, next_sentence_labels):
        masked_lm_loss = F.cross_entropy(prediction_scores.view(-1, self.vocab_size), masked_lm_labels.view(-1),
                                         ignore_index=-1)
        next_sentence_loss = F.cross_entropy(seq_relationship_score.view(-1, 2), next_sentence_labels.view(-1))
        return masked_lm_loss + next_sentence_loss


def take_training_step(args, grad_scaler, model, criterion, batch, stats):
    prediction_scores, seq_relationship_score = model(input_ids=batch['input_ids'], masked_lm_labels=batch['labels'])
    loss = criterion(prediction_scores, seq_relationship_score, batch['labels'], batch['next_sentence_labels'])
    loss = loss / args['gradient_accumulation_steps']
    stats.device_stat('average_loss').add_(loss.detach())
    grad_scaler.scale(loss).backward()


def take_optimizer_step(args, lr_scheduler, optimizer, grad_scaler, stats):
    lr_scheduler.step()  # learning rate warmup
    grad_scaler.step(optimizer)
    # Stats copying is located here prior to the infinity check being reset in GradScaler::update()
    stats.copy_from_device()
    grad_scaler.update()
    optimizer.zero_grad(set_to_none=True)


def graph_size(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


def make_batch(batch=4, seq=16, vocab=64):
    input_ids = torch.randint(5, vocab, (batch, seq))
    labels = torch.full((batch, seq), -1)
    masked = torch.rand(batch, seq) < 0.15
    labels[masked] = input_ids[masked]
    input_ids[masked] = 4  # [MASK]
    return {'input_ids': input_ids, 'labels': labels, 'next_sentence_labels': torch.randint(0, 2, (batch,))}


if __name__ == "__main__":
    args = {'gradient_accumulation_steps': 2, 'log_freq': 2, 'steps': 6}
    model = TinyBertForPreTraining()
    criterion = BertPretrainingCriterion(64)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 4))
    grad_scaler = torch.amp.GradScaler('cpu', enabled=False)

    stats = SyncFreeStats()
    stats.add_stat('average_loss', dtype=torch.float32, device_tensor=torch.zeros([], dtype=torch.float32))

    sizes = []
    training_steps = 0
    for global_step in range(args['steps']):
        for _ in range(args['gradient_accumulation_steps']):
            take_training_step(args, grad_scaler, model, criterion, make_batch(), stats)
            training_steps += 1
        take_optimizer_step(args, lr_scheduler, optimizer, grad_scaler, stats)
        sizes.append(graph_size(stats.device_stat('average_loss')))
        if (global_step + 1) % args['log_freq'] == 0:
            average_loss = stats.host_stat_value('average_loss') / args['log_freq']
            print("step %d average_loss %.4f" % (global_step + 1, average_loss))
            stats.device_stat('average_loss').zero_()
    print("autograd nodes behind the stat after each step:", sizes)
    print("average_loss keeps the graph of every step: %s" % (sizes[-1] > sizes[0]))
