# source: https://github.com/jasonppy/word-discovery/pull/4
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""word-discovery (VG-HuBERT): `AudioEncoder.forward` adds the convolutional positional embedding in place,
`x += x_conv`, where `x` is the projected features that `pos_conv` (a weight-normed Conv1d, SamePad, GELU)
has just read through `x.transpose(1, 2)` and saved for its weight gradient. Training then fails in the
backward with "modified by an inplace operation ... output 0 of AsStridedBackward0".

Written for this set: a three-layer conv feature extractor, a two-layer `nn.TransformerEncoder` and an
in-batch audio/image contrastive loss stand in for the fairseq HuBERT encoder and the visual branch; the
waveforms and image embeddings are random.

Fixed as the pull request fixed it: `x = x + x_conv` (out of place) instead of `x += x_conv`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        return x[:, :, : -self.remove] if self.remove > 0 else x


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, conv_layers):
        super().__init__()
        blocks, in_d = [], 1
        for dim, k, stride in conv_layers:
            blocks.append(nn.Sequential(nn.Conv1d(in_d, dim, k, stride=stride, bias=False), nn.GELU()))
            in_d = dim
        self.conv_layers = nn.ModuleList(blocks)

    def forward(self, x):
        x = x.unsqueeze(1)
        for conv in self.conv_layers:
            x = conv(x)
        return x


class AudioEncoder(nn.Module):
    def __init__(self, embed=32, encoder_embed_dim=48, conv_pos=16, conv_pos_groups=4, layers=2):
        super().__init__()
        self.feature_extractor = ConvFeatureExtractionModel([(embed, 10, 5), (embed, 3, 2), (embed, 3, 2)])
        self.layer_norm = nn.LayerNorm(embed)
        self.post_extract_proj = nn.Linear(embed, encoder_embed_dim)
        self.dropout_input = nn.Dropout(0.1)
        pos_conv = nn.Conv1d(encoder_embed_dim, encoder_embed_dim, kernel_size=conv_pos,
                             padding=conv_pos // 2, groups=conv_pos_groups)
        pos_conv = nn.utils.parametrizations.weight_norm(pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(pos_conv, SamePad(conv_pos), nn.GELU())
        layer = nn.TransformerEncoderLayer(encoder_embed_dim, 4, 2 * encoder_embed_dim, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)

    def forward(self, source):
        features = self.feature_extractor(source)
        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        features = self.post_extract_proj(features)
        features = self.dropout_input(features)
        x = features
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x + x_conv
        return self.encoder(x)


class DualEncoder(nn.Module):
    def __init__(self, dim=48, image_dim=24):
        super().__init__()
        self.audio_encoder = AudioEncoder(encoder_embed_dim=dim)
        self.audio_proj = nn.Linear(dim, dim)
        self.image_proj = nn.Linear(image_dim, dim)

    def forward(self, wav, image_feats):
        audio = self.audio_proj(self.audio_encoder(wav).mean(1))
        image = self.image_proj(image_feats)
        return F.normalize(audio, dim=-1), F.normalize(image, dim=-1)


def contrastive_loss(audio, image, temperature=0.07):
    logits = audio @ image.t() / temperature
    target = torch.arange(audio.size(0))
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2


def main():
    model = DualEncoder()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(3):
        wav = torch.randn(4, 1600)
        image_feats = torch.randn(4, 24)
        audio, image = model(wav, image_feats)
        loss = contrastive_loss(audio, image)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
