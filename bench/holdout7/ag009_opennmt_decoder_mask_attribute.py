# source: https://github.com/OpenNMT/OpenNMT-py/pull/240
# symptom: mask follows the decoder layer to another device: False
"""OpenNMT-py `onmt/modules/Transformer.py` (2017): `TransformerDecoderLayer.__init__` stores the subsequent-position
mask as a plain attribute, `self.mask = self._get_attn_subsequent_mask(MAX_SIZE)`, so `model.cuda()` / `.to(device)`
moves the layer's weights and leaves the mask behind (the device mismatch the pull request fixed). The run moves
the model to the `meta` device, which CPU torch has, to show it."""
import torch
import torch.nn as nn

torch.manual_seed(0)
MAX_SIZE = 64


class MultiHeadedAttention(nn.Module):
    def __init__(self, head_count, model_dim, dropout=0.1):
        super().__init__()
        self.attn = nn.MultiheadAttention(model_dim, head_count, dropout=dropout, batch_first=True)

    def forward(self, key, value, query, mask=None):
        out, attn = self.attn(query, key, value, attn_mask=mask)
        return out, attn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, size, hidden_size, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(size, hidden_size)
        self.w_2 = nn.Linear(hidden_size, size)
        self.layer_norm = nn.LayerNorm(size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        inter = self.dropout(torch.relu(self.w_1(self.layer_norm(x))))
        return self.dropout(self.w_2(inter)) + x


class TransformerDecoderLayer(nn.Module):
    def __init__(self, size, dropout, head_count=2, hidden_size=64):
        super(TransformerDecoderLayer, self).__init__()
        self.self_attn = MultiHeadedAttention(head_count, size, dropout=dropout)
        self.context_attn = MultiHeadedAttention(head_count, size, dropout=dropout)
        self.feed_forward = PositionwiseFeedForward(size, hidden_size, dropout)
        self.layer_norm_1 = nn.LayerNorm(size)
        self.layer_norm_2 = nn.LayerNorm(size)
        self.dropout = dropout
        self.drop = nn.Dropout(dropout)
        self.mask = self._get_attn_subsequent_mask(MAX_SIZE)  # expect: AG009

    def forward(self, inputs, memory_bank, src_pad_mask, tgt_pad_mask):
        tgt_len = inputs.size(1)
        dec_mask = torch.gt(tgt_pad_mask.unsqueeze(1) + self.mask[:tgt_len, :tgt_len].unsqueeze(0), 0)
        dec_mask = dec_mask.repeat_interleave(self.self_attn.attn.num_heads, dim=0)
        input_norm = self.layer_norm_1(inputs)
        query, attn = self.self_attn(input_norm, input_norm, input_norm, mask=dec_mask)
        query = self.drop(query) + inputs
        query_norm = self.layer_norm_2(query)
        mid, attn = self.context_attn(memory_bank, memory_bank, query_norm)
        output = self.feed_forward(self.drop(mid) + query)
        return output, attn

    def _get_attn_subsequent_mask(self, size):
        """Get an attention mask to avoid using the subsequent info."""
        attn_shape = (size, size)
        subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).to(torch.uint8)
        return subsequent_mask


class TransformerDecoder(nn.Module):
    def __init__(self, num_layers, hidden_size, dropout, vocab=20):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden_size, padding_idx=0)
        self.transformer_layers = nn.ModuleList([TransformerDecoderLayer(hidden_size, dropout) for _ in range(num_layers)])
        self.layer_norm = nn.LayerNorm(hidden_size)

    def forward(self, tgt, memory_bank, src_pad_mask=None):
        tgt_pad_mask = tgt.eq(0).to(torch.uint8).unsqueeze(1).expand(-1, tgt.size(1), -1)[:, 0]
        output = self.embeddings(tgt)
        for layer in self.transformer_layers:
            output, attn = layer(output, memory_bank, src_pad_mask, tgt_pad_mask)
        return self.layer_norm(output), attn


decoder = TransformerDecoder(num_layers=2, hidden_size=16, dropout=0.1)
optim = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for step in range(2):
    tgt = torch.randint(1, 20, (2, 7))
    memory_bank = torch.randn(2, 5, 16)
    out, attn = decoder(tgt, memory_bank)
    loss = out.pow(2).mean()
    optim.zero_grad()
    loss.backward()
    optim.step()
    print(f"step {step} | loss {loss.item():.4f}")

decoder.to("meta")  # stands in for model.cuda() on a machine with a GPU
layer = decoder.transformer_layers[0]
print(f"mask follows the decoder layer to another device: {layer.mask.device == layer.feed_forward.w_1.weight.device}")
