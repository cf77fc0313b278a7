"""CLIP trained from scratch: the text tower's positional embedding and projection are never initialised.

In the first release of `clip/model.py`, `CLIP.__init__` creates `self.positional_embedding =
nn.Parameter(torch.empty(context_length, transformer_width))` and `self.text_projection =
nn.Parameter(torch.empty(transformer_width, embed_dim))` and nothing ever writes them: loading the released
checkpoints overwrote them, but a model created to be trained from scratch reads whatever the allocator left there.
PyTorch's deterministic mode fills uninitialised memory with NaN, so the read shows on every run as a NaN loss.
"""
# source: https://github.com/openai/CLIP/issues/15
# symptom: loss nan
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)


class LayerNorm(nn.LayerNorm):
    def forward(self, x):
        orig_type = x.dtype
        return super().forward(x.type(torch.float32)).type(orig_type)


class QuickGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class ResidualAttentionBlock(nn.Module):
    def __init__(self, d_model, n_head, attn_mask=None):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_head)
        self.ln_1 = LayerNorm(d_model)
        self.mlp = nn.Sequential(OrderedDict([
            ("c_fc", nn.Linear(d_model, d_model * 4)),
            ("gelu", QuickGELU()),
            ("c_proj", nn.Linear(d_model * 4, d_model)),
        ]))
        self.ln_2 = LayerNorm(d_model)
        self.attn_mask = attn_mask

    def attention(self, x):
        return self.attn(x, x, x, need_weights=False, attn_mask=self.attn_mask)[0]

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, width, layers, heads, attn_mask=None):
        super().__init__()
        self.width = width
        self.layers = layers
        self.resblocks = nn.Sequential(*[ResidualAttentionBlock(width, heads, attn_mask) for _ in range(layers)])

    def forward(self, x):
        return self.resblocks(x)


class ImageEncoder(nn.Module):
    def __init__(self, input_resolution, width, output_dim):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, kernel_size=4, stride=4, bias=False)
        self.ln_post = LayerNorm(width)
        scale = width ** -0.5
        self.proj = nn.Parameter(scale * torch.randn(width, output_dim))

    def forward(self, x):
        x = self.conv1(x).flatten(2).mean(-1)
        return self.ln_post(x) @ self.proj


class CLIP(nn.Module):
    def __init__(self, embed_dim, image_resolution, vision_width, context_length, vocab_size,
                 transformer_width, transformer_heads, transformer_layers):
        super().__init__()
        self.context_length = context_length
        self.visual = ImageEncoder(image_resolution, vision_width, embed_dim)
        self.transformer = Transformer(width=transformer_width, layers=transformer_layers, heads=transformer_heads,
                                       attn_mask=self.build_attention_mask())
        self.vocab_size = vocab_size
        self.token_embedding = nn.Embedding(vocab_size, transformer_width)
        self.positional_embedding = nn.Parameter(torch.empty(self.context_length, transformer_width))  # expect: AG012
        self.ln_final = LayerNorm(transformer_width)
        self.text_projection = nn.Parameter(torch.empty(transformer_width, embed_dim))  # expect: AG012
        self.logit_scale = nn.Parameter(torch.ones([]))

    def build_attention_mask(self):
        mask = torch.empty(self.context_length, self.context_length)
        mask.fill_(float("-inf"))
        mask.triu_(1)
        return mask

    def encode_image(self, image):
        return self.visual(image)

    def encode_text(self, text):
        x = self.token_embedding(text)
        x = x + self.positional_embedding
        x = x.permute(1, 0, 2)
        x = self.transformer(x)
        x = x.permute(1, 0, 2)
        x = self.ln_final(x)
        return x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.text_projection

    def forward(self, image, text):
        image_features = self.encode_image(image)
        text_features = self.encode_text(text)
        image_features = image_features / image_features.norm(dim=-1, keepdim=True)
        text_features = text_features / text_features.norm(dim=-1, keepdim=True)
        logit_scale = self.logit_scale.exp()
        logits_per_image = logit_scale * image_features @ text_features.t()
        return logits_per_image, logits_per_image.t()


def main():
    torch.manual_seed(0)
    model = CLIP(embed_dim=16, image_resolution=16, vision_width=32, context_length=8, vocab_size=50,
                 transformer_width=32, transformer_heads=4, transformer_layers=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(16, 3, 16, 16)
    texts = torch.randint(1, 48, (16, 8))
    texts[:, -1] = 49  # end-of-text token: the highest id, picked by argmax
    labels = torch.arange(8)
    for step in range(4):
        for i in range(0, 16, 8):
            logits_per_image, logits_per_text = model(images[i:i + 8], texts[i:i + 8])
            loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
