# source: https://github.com/lyuwenyu/RT-DETR/issues/677
# symptom: pos_embed2 follows the encoder to float16: False
"""Twin (the fix the issue proposes, the commented-out line of the code itself: `self.register_buffer(f'pos_embed{idx}',
pos_embed)` instead of `setattr`). RT-DETRv2 `hybrid_encoder.py`: `HybridEncoder._reset_parameters` stored the precomputed sin-cos position
embedding with `setattr(self, f'pos_embed{idx}', pos_embed)`, a plain attribute, not a buffer; `model.half()` then
converted every weight but not the embedding, and the fp16 forward in eval mode died on the dtype mismatch."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=64, dropout=0.0, activation="gelu", normalize_before=False):
        super().__init__()
        self.normalize_before = normalize_before
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.activation = nn.GELU()

    @staticmethod
    def with_pos_embed(tensor, pos_embed):
        return tensor if pos_embed is None else tensor + pos_embed

    def forward(self, src, src_mask=None, pos_embed=None):
        residual = src
        q = k = self.with_pos_embed(src, pos_embed)
        src, _ = self.self_attn(q, k, value=src, attn_mask=src_mask)
        src = self.norm1(residual + self.dropout(src))
        residual = src
        src = self.linear2(self.dropout(self.activation(self.linear1(src))))
        return self.norm2(residual + self.dropout(src))


class TransformerEncoder(nn.Module):
    def __init__(self, encoder_layer, num_layers):
        super().__init__()
        self.layers = nn.ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])

    def forward(self, src, src_mask=None, pos_embed=None):
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=src_mask, pos_embed=pos_embed)
        return output


class HybridEncoder(nn.Module):
    def __init__(self, in_channels=[8, 16, 32], feat_strides=[8, 16, 32], hidden_dim=16, nhead=2, dim_feedforward=32,
                 use_encoder_idx=[2], num_encoder_layers=1, pe_temperature=10000, eval_spatial_size=[64, 64]):
        super().__init__()
        self.in_channels = in_channels
        self.feat_strides = feat_strides
        self.hidden_dim = hidden_dim
        self.use_encoder_idx = use_encoder_idx
        self.num_encoder_layers = num_encoder_layers
        self.pe_temperature = pe_temperature
        self.eval_spatial_size = eval_spatial_size
        self.input_proj = nn.ModuleList([
            nn.Sequential(nn.Conv2d(c, hidden_dim, kernel_size=1, bias=False), nn.BatchNorm2d(hidden_dim))
            for c in in_channels])
        encoder_layer = TransformerEncoderLayer(hidden_dim, nhead, dim_feedforward)
        self.encoder = nn.ModuleList([TransformerEncoder(copy.deepcopy(encoder_layer), num_encoder_layers)
                                      for _ in range(len(use_encoder_idx))])
        self.fuse = nn.Conv2d(hidden_dim * len(in_channels), hidden_dim, 1)
        self._reset_parameters()

    def _reset_parameters(self):
        if self.eval_spatial_size:
            for idx in self.use_encoder_idx:
                stride = self.feat_strides[idx]
                pos_embed = self.build_2d_sincos_position_embedding(
                    self.eval_spatial_size[1] // stride, self.eval_spatial_size[0] // stride,
                    self.hidden_dim, self.pe_temperature)
                self.register_buffer(f'pos_embed{idx}', pos_embed)

    @staticmethod
    def build_2d_sincos_position_embedding(w, h, embed_dim=256, temperature=10000.):
        grid_w = torch.arange(int(w), dtype=torch.float32)
        grid_h = torch.arange(int(h), dtype=torch.float32)
        grid_w, grid_h = torch.meshgrid(grid_w, grid_h, indexing='ij')
        assert embed_dim % 4 == 0, 'Embed dimension must be divisible by 4 for 2D sin-cos position embedding'
        pos_dim = embed_dim // 4
        omega = torch.arange(pos_dim, dtype=torch.float32) / pos_dim
        omega = 1. / (temperature ** omega)
        out_w = grid_w.flatten()[..., None] @ omega[None]
        out_h = grid_h.flatten()[..., None] @ omega[None]
        return torch.concat([out_w.sin(), out_w.cos(), out_h.sin(), out_h.cos()], dim=1)[None, :, :]

    def forward(self, feats):
        proj_feats = [self.input_proj[i](feat) for i, feat in enumerate(feats)]
        if self.num_encoder_layers > 0:
            for i, enc_ind in enumerate(self.use_encoder_idx):
                h, w = proj_feats[enc_ind].shape[2:]
                src_flatten = proj_feats[enc_ind].flatten(2).permute(0, 2, 1)
                if self.training or self.eval_spatial_size is None:
                    pos_embed = self.build_2d_sincos_position_embedding(
                        w, h, self.hidden_dim, self.pe_temperature).to(src_flatten.device)
                else:
                    pos_embed = getattr(self, f'pos_embed{enc_ind}', None).to(src_flatten.device)
                memory = self.encoder[i](src_flatten, pos_embed=pos_embed)
                proj_feats[enc_ind] = memory.permute(0, 2, 1).reshape(-1, self.hidden_dim, h, w).contiguous()
        size = proj_feats[0].shape[2:]
        return self.fuse(torch.cat([F.interpolate(f, size=size) for f in proj_feats], dim=1))


def backbone_feats(batch=1, size=64, dtype=torch.float32):
    return [torch.randn(batch, c, size // s, size // s, dtype=dtype) for c, s in zip([8, 16, 32], [8, 16, 32])]


model = HybridEncoder()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model.train()
for step in range(2):
    out = model(backbone_feats(batch=2))
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step} | loss {loss.item():.4f}")

# deploy: fp16 export / inference
model = model.eval().half()
print(f"pos_embed2 follows the encoder to float16: {model.pos_embed2.dtype == torch.float16}")
with torch.no_grad():
    out = model(backbone_feats(dtype=torch.float16))
print(f"fp16 encoder output {tuple(out.shape)} {out.dtype}")
