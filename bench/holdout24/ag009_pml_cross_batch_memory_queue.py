# source: https://github.com/KevinMusgrave/pytorch-metric-learning/commit/4520db7b9d50e60d7e9c828ba8a36c6e110b08f7
# symptom: embedding_memory saved in state_dict: False
"""pytorch-metric-learning CrossBatchMemory before the commit "Use register_buffer for
CrossBatchMemory embedding_memory and label_memory": reset_queue() (called from __init__) stores
the memory queue as plain tensors, so it is not part of the loss module's state_dict (a checkpoint
resumes with an empty queue) and module moves leave it behind; forward() moves it to the
embeddings' device on every call instead."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def to_device(x, device=None, dtype=None):
    """Stand-in for pytorch_metric_learning.utils.common_functions.to_device."""
    return x.to(device=device, dtype=dtype if (dtype is not None and x.is_floating_point()) else x.dtype)


def get_all_pairs_indices(labels, ref_labels):
    matches = (labels.unsqueeze(1) == ref_labels.unsqueeze(0)).byte()
    diffs = matches ^ 1
    a1_idx, p_idx = torch.where(matches)
    a2_idx, n_idx = torch.where(diffs)
    return a1_idx, p_idx, a2_idx, n_idx


class ContrastiveLoss(nn.Module):
    def __init__(self, pos_margin=0.0, neg_margin=1.0):
        super().__init__()
        self.pos_margin = pos_margin
        self.neg_margin = neg_margin

    def forward(self, embeddings, labels, indices_tuple, ref_emb, ref_labels):
        a1, p, a2, n = indices_tuple
        dist = torch.cdist(embeddings, ref_emb)
        pos = F.relu(dist[a1, p] - self.pos_margin)
        neg = F.relu(self.neg_margin - dist[a2, n])
        return pos.mean() + neg.mean()


class CrossBatchMemory(nn.Module):
    def __init__(self, loss, embedding_size, memory_size=1024, miner=None):
        super().__init__()
        self.loss = loss
        self.miner = miner
        self.embedding_size = embedding_size
        self.memory_size = memory_size
        self.reset_queue()

    def forward(self, embeddings, labels):
        assert len(embeddings) <= len(self.embedding_memory)
        device = embeddings.device
        labels = to_device(labels, device=device)
        self.embedding_memory = to_device(self.embedding_memory, device=device, dtype=embeddings.dtype)
        self.label_memory = to_device(self.label_memory, device=device, dtype=labels.dtype)
        batch_size = len(embeddings)
        self.add_to_memory(embeddings, labels, batch_size)
        if not self.has_been_filled:
            E_mem = self.embedding_memory[: self.queue_idx]
            L_mem = self.label_memory[: self.queue_idx]
        else:
            E_mem = self.embedding_memory
            L_mem = self.label_memory
        indices_tuple = get_all_pairs_indices(labels, L_mem)
        return self.loss(embeddings, labels, indices_tuple, E_mem, L_mem)

    def add_to_memory(self, embeddings, labels, batch_size):
        self.curr_batch_idx = (
            torch.arange(self.queue_idx, self.queue_idx + batch_size, device=labels.device) % self.memory_size
        )
        self.embedding_memory[self.curr_batch_idx] = embeddings.detach()
        self.label_memory[self.curr_batch_idx] = labels.detach()
        prev_queue_idx = self.queue_idx
        self.queue_idx = (self.queue_idx + batch_size) % self.memory_size
        if (not self.has_been_filled) and (self.queue_idx <= prev_queue_idx):
            self.has_been_filled = True

    def reset_queue(self):
        self.embedding_memory = torch.zeros(self.memory_size, self.embedding_size)  # expect: AG009
        self.label_memory = torch.zeros(self.memory_size).long()  # expect: AG009
        self.has_been_filled = False
        self.queue_idx = 0


def main():
    torch.manual_seed(0)
    trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
    loss_fn = CrossBatchMemory(ContrastiveLoss(), embedding_size=16, memory_size=64)
    opt = torch.optim.Adam(trunk.parameters(), lr=1e-3)
    for step in range(10):
        x = torch.randn(16, 10)
        y = torch.randint(0, 4, (16,))
        loss = loss_fn(trunk(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    checkpoint = {"trunk": trunk.state_dict(), "loss": loss_fn.state_dict()}
    print("loss state_dict keys:", sorted(checkpoint["loss"].keys()))
    print(f"embedding_memory saved in state_dict: {'embedding_memory' in checkpoint['loss']}")


if __name__ == "__main__":
    main()
