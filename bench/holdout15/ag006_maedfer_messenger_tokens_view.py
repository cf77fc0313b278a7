# source: https://github.com/sunlicai/MAE-DFER/issues/15
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""MAE-DFER `modeling_finetune.py`, the local-global block (LGBlock): the messenger tokens are taken as a view
of the tokens, `rearrange(x[:, 0], '(b n) c -> b n c')`, normalised and attended over the regions, and then
written back with `x[:, 0] = ...`; the write bumps the version of the view the LayerNorm saved, so fine-tuning
fails in backward. Written for this set with the block's structure (first attention over each region,
second attention over the messenger tokens, third attention local<->global, MLP); `rearrange` is a reshape
here (einops is not in the venv); random clips, 7 expression classes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class LGBlock(nn.Module):
    def __init__(self, dim, num_heads=2, mlp_ratio=2.0):
        super().__init__()
        self.first_attn_norm0 = nn.LayerNorm(dim)
        self.first_attn = Attention(dim, num_heads)
        self.second_attn_norm0 = nn.LayerNorm(dim)
        self.second_attn = Attention(dim, num_heads)
        self.third_attn_norm0 = nn.LayerNorm(dim)
        self.third_attn = Attention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))
        self.drop_path = nn.Identity()

    def forward(self, x, b):
        """x: (B*N, S, C), N local regions, S = 1 messenger token + region size."""
        bn, s, c = x.shape
        n = bn // b
        # perform local (intra-region) self-attention
        x = x + self.drop_path(self.first_attn(self.first_attn_norm0(x)))
        # perform global (inter-region) self-attention over the messenger tokens
        messenger_tokens = x[:, 0].reshape(b, n, c)  # rearrange '(b n) c -> b n c'
        messenger_tokens = messenger_tokens + self.drop_path(
            self.second_attn(self.second_attn_norm0(messenger_tokens))
        )
        x[:, 0] = messenger_tokens.reshape(bn, c)  # expect: AG006
        # perform local-global interaction
        x = x + self.drop_path(self.third_attn(self.third_attn_norm0(x)))
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class VisionTransformer(nn.Module):
    def __init__(self, in_dim=24, dim=32, depth=2, num_regions=4, region_size=3, num_classes=7):
        super().__init__()
        self.num_regions, self.region_size = num_regions, region_size
        self.patch_embed = nn.Linear(in_dim, dim)
        self.messenger = nn.Parameter(torch.zeros(1, 1, dim))
        nn.init.trunc_normal_(self.messenger, std=0.02)
        self.blocks = nn.ModuleList([LGBlock(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, clips):
        b = clips.shape[0]
        x = self.patch_embed(clips)                                   # (B, N*R, C)
        x = x.reshape(b * self.num_regions, self.region_size, -1)      # '(b n) r c'
        x = torch.cat([self.messenger.expand(x.shape[0], -1, -1), x], dim=1)
        for blk in self.blocks:
            x = blk(x, b)
        x = x[:, 1:].reshape(b, self.num_regions * self.region_size, -1).mean(1)
        return self.head(self.norm(x))


def main():
    torch.manual_seed(0)
    model = VisionTransformer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    for step in range(3):
        clips = torch.randn(4, 12, 24)
        labels = torch.randint(0, 7, (4,))
        loss = criterion(model(clips), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", round(loss.item(), 4))


if __name__ == "__main__":
    main()
