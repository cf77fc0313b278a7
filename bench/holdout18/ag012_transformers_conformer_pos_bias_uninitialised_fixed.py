# source: https://github.com/huggingface/transformers/pull/18368
# symptom: loss nan
"""transformers Wav2Vec2-Conformer `Wav2Vec2ConformerSelfAttention` with relative position embeddings: the two
content/position bias terms are created as `nn.Parameter(torch.Tensor(num_heads, head_size))` (copied from fairseq)
and neither `__init__` nor the model's `_init_weights` writes them, so a model trained from scratch starts from
uninitialised memory ("nans if you have unlucky init"). Deterministic mode fills such memory with NaN, so the
uninitialised read shows on every run.

Fixed as the merged pull request does: `nn.Parameter(torch.zeros(self.num_heads, self.head_size))` for both biases."""
import math

import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)


class Config:
    hidden_size = 16
    num_attention_heads = 2
    attention_dropout = 0.0
    position_embeddings_type = "relative"


class Wav2Vec2ConformerRelPositionalEmbedding(nn.Module):
    def __init__(self, config, max_len=64):
        super().__init__()
        self.d_model = config.hidden_size
        pos = torch.arange(-(max_len - 1), max_len, dtype=torch.float32).flip(0).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / self.d_model))
        pe = torch.zeros(2 * max_len - 1, self.d_model)
        pe[:, 0::2] = torch.sin(pos * div_term)
        pe[:, 1::2] = torch.cos(pos * div_term)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)
        self.max_len = max_len

    def forward(self, hidden_states):
        t = hidden_states.size(1)
        center = self.max_len - 1
        return self.pe[:, center - t + 1: center + t]


class Wav2Vec2ConformerSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.head_size = config.hidden_size // config.num_attention_heads
        self.num_heads = config.num_attention_heads
        self.position_embeddings_type = config.position_embeddings_type
        self.linear_q = nn.Linear(config.hidden_size, config.hidden_size)
        self.linear_k = nn.Linear(config.hidden_size, config.hidden_size)
        self.linear_v = nn.Linear(config.hidden_size, config.hidden_size)
        self.linear_out = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(p=config.attention_dropout)
        if self.position_embeddings_type == "relative":
            self.linear_pos = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
            self.pos_bias_u = nn.Parameter(torch.zeros(self.num_heads, self.head_size))
            self.pos_bias_v = nn.Parameter(torch.zeros(self.num_heads, self.head_size))

    def forward(self, hidden_states, relative_position_embeddings):
        batch_size, sequence_length, hidden_size = hidden_states.size()
        query = self.linear_q(hidden_states).view(batch_size, -1, self.num_heads, self.head_size)
        key = self.linear_k(hidden_states).view(batch_size, -1, self.num_heads, self.head_size).transpose(1, 2)
        value = self.linear_v(hidden_states).view(batch_size, -1, self.num_heads, self.head_size).transpose(1, 2)
        scores = self._apply_relative_embeddings(query, key, relative_position_embeddings)
        probs = self.dropout(torch.softmax(scores, dim=-1))
        hidden_states = torch.matmul(probs, value).transpose(1, 2).reshape(batch_size, -1, hidden_size)
        return self.linear_out(hidden_states)

    def _apply_relative_embeddings(self, query, key, relative_position_embeddings):
        proj = self.linear_pos(relative_position_embeddings)
        proj = proj.view(relative_position_embeddings.size(0), -1, self.num_heads, self.head_size)
        proj = proj.transpose(1, 2).transpose(2, 3)
        q_with_bias_u = (query + self.pos_bias_u).transpose(1, 2)
        q_with_bias_v = (query + self.pos_bias_v).transpose(1, 2)
        scores_ac = torch.matmul(q_with_bias_u, key.transpose(-2, -1))
        scores_bd = torch.matmul(q_with_bias_v, proj)
        zero_pad = torch.zeros((*scores_bd.size()[:3], 1), dtype=scores_bd.dtype)
        padded = torch.cat([zero_pad, scores_bd], dim=-1)
        padded = padded.view(*scores_bd.size()[:2], scores_bd.shape[3] + 1, scores_bd.shape[2])
        scores_bd = padded[:, :, 1:].view_as(scores_bd)[:, :, :, : scores_bd.size(-1) // 2 + 1]
        return (scores_ac + scores_bd) / math.sqrt(self.head_size)


class TinyConformerCTC(nn.Module):
    def __init__(self, config, vocab=6):
        super().__init__()
        self.pos = Wav2Vec2ConformerRelPositionalEmbedding(config)
        self.attn = Wav2Vec2ConformerSelfAttention(config)
        self.norm = nn.LayerNorm(config.hidden_size)
        self.lm_head = nn.Linear(config.hidden_size, vocab)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        # as the PreTrainedModel's _init_weights: Linear and LayerNorm only
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            nn.init.zeros_(module.bias)
            nn.init.ones_(module.weight)

    def forward(self, x):
        return self.lm_head(self.norm(x + self.attn(x, self.pos(x))))


torch.manual_seed(0)
model = TinyConformerCTC(Config())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(2, 8, Config.hidden_size)
    labels = torch.randint(0, 6, (2, 8))
    logits = model(x)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 6), labels.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "loss", "nan" if torch.isnan(loss) else "{:.4f}".format(loss.item()))
