"""GPT-NeoX attention: `norm_factor` is a plain tensor attribute, so `model.half()` leaves it in float32.

`GPTNeoXAttention.__init__` (transformers) keeps the attention scale as `self.norm_factor = torch.sqrt(torch.tensor(
head_size, dtype=torch.float32)).to(torch.get_default_dtype())`. It is neither a parameter nor a buffer, so
`model.half()` (and `.to(device)`) never touch it and `_attn` builds the `baddbmm` scale from a float32 tensor while
the scores are float16; the reporter's half-precision inference stopped with "expected scalar type Half but found
Float". In the torch used here `baddbmm` accepts the mixed scale, so the program prints whether the scale was left
behind by `.half()`.
"""
# source: https://github.com/huggingface/transformers/pull/22888
# symptom: norm_factor left in float32 by \.half\(\): True
import torch
from torch import nn


class Config:
    hidden_size = 32
    num_attention_heads = 4
    max_position_embeddings = 64
    intermediate_size = 64
    num_hidden_layers = 2
    vocab_size = 50
    layer_norm_eps = 1e-5


class GPTNeoXAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.hidden_size = config.hidden_size
        self.head_size = self.hidden_size // self.num_attention_heads
        max_positions = config.max_position_embeddings
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions),
        )
        self.register_buffer("masked_bias", torch.tensor(-1e9))
        self.norm_factor = torch.sqrt(torch.tensor(self.head_size, dtype=torch.float32)).to(torch.get_default_dtype())  # expect: AG009
        self.query_key_value = nn.Linear(config.hidden_size, 3 * config.hidden_size)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def _attn(self, query, key, value):
        batch_size, num_attention_heads, query_length, attn_head_size = query.size()
        key_length = key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        query = query.reshape(batch_size * num_attention_heads, query_length, attn_head_size)
        key = key.reshape(batch_size * num_attention_heads, key_length, attn_head_size)
        attn_scores = torch.zeros(batch_size * num_attention_heads, query_length, key_length, dtype=query.dtype)
        attn_scores = torch.baddbmm(
            attn_scores,
            query,
            key.transpose(1, 2),
            beta=1.0,
            alpha=(torch.tensor(1.0, dtype=self.norm_factor.dtype, device=self.norm_factor.device) / self.norm_factor),
        )
        attn_scores = attn_scores.view(batch_size, num_attention_heads, query_length, key_length)
        mask_value = torch.tensor(torch.finfo(attn_scores.dtype).min, dtype=attn_scores.dtype)
        attn_scores = torch.where(causal_mask, attn_scores, mask_value)
        attn_weights = nn.functional.softmax(attn_scores, dim=-1).to(value.dtype)
        return torch.matmul(attn_weights, value), attn_weights

    def forward(self, hidden_states):
        b, t, _ = hidden_states.shape
        qkv = self.query_key_value(hidden_states).view(b, t, self.num_attention_heads, 3 * self.head_size)
        query, key, value = qkv.permute(0, 2, 1, 3).chunk(3, dim=-1)
        attn_output, _ = self._attn(query, key, value)
        attn_output = attn_output.permute(0, 2, 1, 3).reshape(b, t, self.hidden_size)
        return self.dense(attn_output)


class GPTNeoXLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.post_attention_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.attention = GPTNeoXAttention(config)
        self.mlp = nn.Sequential(nn.Linear(config.hidden_size, config.intermediate_size), nn.GELU(),
                                 nn.Linear(config.intermediate_size, config.hidden_size))

    def forward(self, hidden_states):
        attn_output = self.attention(self.input_layernorm(hidden_states))
        mlp_output = self.mlp(self.post_attention_layernorm(hidden_states))
        return attn_output + mlp_output + hidden_states


class GPTNeoXForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_in = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([GPTNeoXLayer(config) for _ in range(config.num_hidden_layers)])
        self.final_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.embed_out = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids):
        hidden_states = self.embed_in(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.embed_out(self.final_layer_norm(hidden_states))


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens=5):
    for _ in range(max_new_tokens):
        logits = model(input_ids)
        input_ids = torch.cat([input_ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return input_ids


def main():
    torch.manual_seed(0)
    config = Config()
    model = GPTNeoXForCausalLM(config).eval().half()
    out = greedy_generate(model, torch.randint(0, config.vocab_size, (2, 6)))
    print("generated:", out.tolist())
    attn = model.layers[0].attention
    print(f"model dtype {model.embed_out.weight.dtype}, norm_factor dtype {attn.norm_factor.dtype}")
    left_behind = any(layer.attention.norm_factor.dtype != torch.float16 for layer in model.layers)
    print(f"norm_factor left in float32 by .half(): {left_behind}")


if __name__ == "__main__":
    main()
