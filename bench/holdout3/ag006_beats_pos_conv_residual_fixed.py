# source: https://github.com/microsoft/unilm/pull/999
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# Clean twin: x = x.clone() + x_conv, the PR's fix.
import torch
import torch.nn as nn


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        return x[:, :, :-self.remove] if self.remove > 0 else x


class TransformerEncoder(nn.Module):
    def __init__(self, embed_dim=16, conv_pos=4, conv_pos_groups=4, layer_norm_first=False):
        super().__init__()
        self.pos_conv = nn.Sequential(
            nn.Conv1d(embed_dim, embed_dim, kernel_size=conv_pos, padding=conv_pos // 2, groups=conv_pos_groups),
            SamePad(conv_pos),
            nn.GELU(),
        )
        self.layer_norm = nn.LayerNorm(embed_dim)
        self.layer_norm_first = layer_norm_first
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(embed_dim, 2, 32, dropout=0.0, batch_first=True)])

    def forward(self, x, padding_mask=None):
        return self.extract_features(x, padding_mask)

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x.clone() + x_conv
        if not self.layer_norm_first:
            x = self.layer_norm(x)
        for layer in self.layers:
            x = layer(x)
        return x


class BEATs(nn.Module):
    def __init__(self, in_dim=10, embed_dim=16):
        super().__init__()
        self.post_extract_proj = nn.Linear(in_dim, embed_dim)
        self.encoder = TransformerEncoder(embed_dim)

    def forward(self, features):
        features = self.post_extract_proj(features)
        return self.encoder(features)


torch.manual_seed(0)
model = BEATs()
head = nn.Linear(16, 3)
optimizer = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4)
fbank, labels = torch.randn(2, 12, 10), torch.tensor([0, 2])
optimizer.zero_grad()
loss = nn.functional.cross_entropy(head(model(fbank).mean(1)), labels)
loss.backward()
optimizer.step()
print("loss", loss.item())
