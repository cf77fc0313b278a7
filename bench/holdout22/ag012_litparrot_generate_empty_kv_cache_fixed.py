# source: https://github.com/Lightning-AI/litgpt/commit/1ec84f806521668b622756f816b1bb8f2cdf715a
# symptom: probability tensor contains either
"""lit-parrot (now litgpt) generate.py after the fix: the KV caches are allocated with
`torch.zeros(cache_shape)` (the commit also changes the same allocation in a test). Before the fix, `generate` allocates the per-layer
KV caches with `torch.empty(cache_shape)`. Each step writes only the positions generated
so far (`cache_k.index_copy(2, input_pos, k)`), but attention runs over the whole cache
with a causal mask, so the unwritten slots reach the softmax/value product and the logits
turn NaN ("Revert empty usage. It creates nans").

Runs in PyTorch's deterministic mode, as the bug program does. Stand-ins: a tiny config, a few training
steps on random tokens, a fixed prompt instead of the tokenizer.
"""
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.use_deterministic_algorithms(True)


@dataclass
class Config:
    block_size: int = 32
    vocab_size: int = 40
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 16
    rotary_percentage: float = 0.25
    parallel_residual: bool = True


def build_rope_cache(seq_len, n_elem, dtype, device, base=10000):
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, dtype=dtype, device=device) / n_elem))
    seq_idx = torch.arange(seq_len, dtype=dtype, device=device)
    idx_theta = torch.outer(seq_idx, theta).float().repeat(1, 2)
    return torch.cos(idx_theta), torch.sin(idx_theta)


def apply_rope(x, cos, sin):
    half = x.size(-1) // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return ((x * cos) + (rotated * sin)).type_as(x)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=True)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=True)
        self.n_head = config.n_head
        self.rotary_percentage = config.rotary_percentage

    def forward(self, x, rope, mask, input_pos=None, kv_cache=None):
        B, T, C = x.size()
        head_size = C // self.n_head
        qkv = self.attn(x).view(B, T, self.n_head, 3 * head_size).transpose(1, 2)
        q, k, v = qkv.split(head_size, dim=-1)

        n_elem = int(self.rotary_percentage * head_size)
        cos, sin = rope
        q = torch.cat((apply_rope(q[..., :n_elem], cos, sin), q[..., n_elem:]), dim=-1)
        k = torch.cat((apply_rope(k[..., :n_elem], cos, sin), k[..., n_elem:]), dim=-1)

        if kv_cache is not None:
            cache_k, cache_v = kv_cache
            k = cache_k.index_copy(2, input_pos, k)
            v = cache_v.index_copy(2, input_pos, v)
            kv_cache = k, v

        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.0,
                                           scale=1.0 / math.sqrt(head_size))
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y), kv_cache


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=True)
        self.proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=True)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.norm_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)
        self.parallel_residual = config.parallel_residual

    def forward(self, x, rope, mask, input_pos=None, kv_cache=None):
        h, new_kv_cache = self.attn(self.norm_1(x), rope, mask, input_pos, kv_cache)
        if self.parallel_residual:
            x = x + h + self.mlp(self.norm_2(x))
        else:
            x = x + h
            x = x + self.mlp(self.norm_2(x))
        return x, new_kv_cache


class Parrot(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            h=nn.ModuleList(Block(config) for _ in range(config.n_layer)),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.rope_cache = None
        self.mask_cache = None

    def forward(self, idx, input_pos: Optional[torch.Tensor] = None, kv_caches=None):
        _, T = idx.size()
        if self.rope_cache is None:
            head_size = self.config.n_embd // self.config.n_head
            self.rope_cache = build_rope_cache(self.config.block_size,
                                               int(self.config.rotary_percentage * head_size),
                                               torch.float32, idx.device)
        if self.mask_cache is None:
            ones = torch.ones((self.config.block_size, self.config.block_size), dtype=torch.bool)
            self.mask_cache = torch.tril(ones).unsqueeze(0).unsqueeze(0)

        cos, sin = self.rope_cache
        if input_pos is not None:
            cos, sin = cos.index_select(0, input_pos), sin.index_select(0, input_pos)
            mask = self.mask_cache.index_select(2, input_pos)
            target_len = kv_caches[0][0].size(2)
            mask = mask[:, :, :target_len, :target_len]
        else:
            cos, sin = cos[:T], sin[:T]
            mask = self.mask_cache[:, :, :T, :T]

        x = self.transformer.wte(idx)
        new_kv_caches = None if kv_caches is None else []
        for i, block in enumerate(self.transformer.h):
            x, new_kv_cache = block(x, (cos, sin), mask, input_pos,
                                    None if kv_caches is None else kv_caches[i])
            if kv_caches is not None:
                new_kv_caches.append(new_kv_cache)
        logits = self.lm_head(self.transformer.ln_f(x))
        return logits if new_kv_caches is None else (logits, new_kv_caches)


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, eos_id=None):
    T = idx.size(0)
    T_new = T + max_new_tokens
    empty = torch.empty(T_new, dtype=idx.dtype, device=idx.device)
    empty[:T] = idx
    idx = empty

    cache_shape = (1, model.config.n_head, T_new, model.config.n_embd // model.config.n_head)
    kv_caches = [
        (torch.zeros(cache_shape, device=idx.device), torch.zeros(cache_shape, device=idx.device))
        for _ in range(model.config.n_layer)
    ]

    input_pos = torch.arange(0, T, device=idx.device)
    input_idx = idx.index_select(0, input_pos)
    for t in range(T, T_new):
        logits, kv_caches = model(input_idx.view(1, -1), input_pos, kv_caches)
        logits = logits[0, -1] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits = torch.where(logits < v[[-1]], -float("Inf"), logits)
        probs = torch.nn.functional.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1).to(dtype=idx.dtype)
        idx = idx.index_copy(0, input_pos[-1] + 1, idx_next)
        input_pos = input_pos[-1:] + 1
        input_idx = idx.index_select(0, input_pos)
        if idx_next == eos_id:
            return idx[: t + 1]
    return idx


def main():
    torch.manual_seed(0)
    config = Config()
    model = Parrot(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(5):
        data = torch.randint(0, config.vocab_size, (4, 17))
        logits = model(data[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, config.vocab_size), data[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("train loss %.4f" % loss.item())

    model.eval()
    prompt = torch.tensor([1, 5, 7, 3])
    y = generate(model, prompt, max_new_tokens=8, temperature=0.8, top_k=20)
    print("generated:", y.tolist())


if __name__ == "__main__":
    main()
