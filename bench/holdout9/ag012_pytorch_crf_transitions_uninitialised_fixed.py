# source: https://github.com/kmkurn/pytorch-crf/issues/1
# symptom: loss nan
"""Fixed twin: the maintainer's fix for the issue (commit 559221d, released in 0.4.1: "Initialize parameters in
`__init__` (fixes #1)"): `__init__` calls `reset_parameters()`, which draws the three score tensors uniformly from
[-0.1, 0.1]. The program still runs in deterministic mode.
"""
from typing import Optional

import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)  # debugging aid: uninitialised memory reads come out as NaN
torch.manual_seed(0)


class CRF(nn.Module):
    """Conditional random field (log likelihood of a tag sequence given emission scores)."""

    def __init__(self, num_tags: int) -> None:
        if num_tags <= 0:
            raise ValueError(f'invalid number of tags: {num_tags}')
        super().__init__()
        self.num_tags = num_tags
        self.start_transitions = nn.Parameter(torch.Tensor(num_tags))
        self.end_transitions = nn.Parameter(torch.Tensor(num_tags))
        self.transitions = nn.Parameter(torch.Tensor(num_tags, num_tags))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Initialize the transition parameters uniformly between -0.1 and 0.1."""
        nn.init.uniform_(self.start_transitions, -0.1, 0.1)
        nn.init.uniform_(self.end_transitions, -0.1, 0.1)
        nn.init.uniform_(self.transitions, -0.1, 0.1)

    def forward(self, emissions, tags, mask: Optional[torch.Tensor] = None, summed: bool = True):
        if emissions.dim() != 3:
            raise ValueError(f'emissions must have dimension of 3, got {emissions.dim()}')
        if emissions.size()[:2] != tags.size():
            raise ValueError('the first two dimensions of emissions and tags must match')
        if mask is None:
            mask = torch.ones_like(tags, dtype=torch.uint8)
        numerator = self._compute_joint_llh(emissions, tags, mask)
        denominator = self._compute_log_partition_function(emissions, mask)
        llh = numerator - denominator
        return torch.sum(llh) if summed else llh

    def _compute_joint_llh(self, emissions, tags, mask):
        seq_length = emissions.size(0)
        mask = mask.float()
        # Start transition score
        llh = self.start_transitions[tags[0]]  # (batch_size,)
        for i in range(seq_length - 1):
            cur_tag, next_tag = tags[i], tags[i + 1]
            # Emission score for current tag
            llh += emissions[i].gather(1, cur_tag.view(-1, 1)).squeeze(1) * mask[i]
            # Transition score to next tag, only if the next tag is not masked
            transition_score = self.transitions[cur_tag, next_tag]
            llh += transition_score * mask[i + 1]
        # Find last tag index
        last_tag_indices = mask.long().sum(0) - 1  # (batch_size,)
        last_tags = tags.gather(0, last_tag_indices.view(1, -1)).squeeze(0)
        # End transition score and emission score for the last tag
        llh += self.end_transitions[last_tags]
        llh += emissions[-1].gather(1, last_tags.view(-1, 1)).squeeze(1) * mask[-1]
        return llh

    def _compute_log_partition_function(self, emissions, mask):
        seq_length = emissions.size(0)
        mask = mask.float()
        # Start transition score and first emission
        log_prob = self.start_transitions.view(1, -1) + emissions[0]
        for i in range(1, seq_length):
            broadcast_log_prob = log_prob.unsqueeze(2)  # (batch_size, num_tags, 1)
            broadcast_transitions = self.transitions.unsqueeze(0)  # (1, num_tags, num_tags)
            broadcast_emissions = emissions[i].unsqueeze(1)  # (batch_size, 1, num_tags)
            score = broadcast_log_prob + broadcast_transitions + broadcast_emissions
            score = self._log_sum_exp(score, 1)  # (batch_size, num_tags)
            log_prob = score * mask[i].unsqueeze(1) + log_prob * (1. - mask[i]).unsqueeze(1)
        # End transition score
        log_prob += self.end_transitions.view(1, -1)
        return self._log_sum_exp(log_prob, 1)  # (batch_size,)

    @staticmethod
    def _log_sum_exp(tensor, dim):
        offset, _ = tensor.max(dim)
        broadcast_offset = offset.unsqueeze(dim)
        safe_log_sum_exp = torch.log(torch.sum(torch.exp(tensor - broadcast_offset), dim))
        return offset + safe_log_sum_exp


class BiLSTMCRF(nn.Module):
    def __init__(self, vocab_size=30, embed_dim=16, hidden=16, num_tags=5):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden, bidirectional=True)
        self.hidden2tag = nn.Linear(2 * hidden, num_tags)
        self.crf = CRF(num_tags)

    def loss(self, words, tags, mask):
        emissions = self.hidden2tag(self.lstm(self.embed(words))[0])  # (seq_length, batch_size, num_tags)
        return -self.crf(emissions, tags, mask=mask)


if __name__ == "__main__":
    seq_length, batch_size = 7, 4
    words = torch.randint(0, 30, (seq_length, batch_size))
    tags = words % 5
    mask = torch.ones(seq_length, batch_size, dtype=torch.uint8)
    mask[5:, 2:] = 0
    model = BiLSTMCRF()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(4):
        loss = model.loss(words, tags, mask)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("epoch %d loss %.4f" % (epoch, loss.item()))
