# source: https://github.com/pvjosue/pytorch_convNd/pull/6 (pattern: N-dimensional convolution module allocates its bias without initialising it when no bias initializer is passed, so NaNs propagate into the output)
# symptom: loss nan
"""convNd-style layer built from stacked lower-dimensional convolutions plus one shared bias."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)  # uninitialised memory is filled with NaN, as it may hold garbage
torch.manual_seed(0)


class ConvNd(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, use_bias=True,
                 kernel_initializer=None, bias_initializer=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.conv_layers = nn.ModuleList(
            nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
            for _ in range(kernel_size))
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(out_channels))  # expect: AG012
        else:
            self.register_parameter("bias", None)
        if kernel_initializer is not None:
            for conv in self.conv_layers:
                kernel_initializer(conv.weight)
        if bias_initializer is not None and self.bias is not None:
            bias_initializer(self.bias)

    def forward(self, x):
        # x: (b, c, frames, h, w); combine neighbouring frames with one 2-D conv each
        b, c, t, h, w = x.shape
        pad = self.kernel_size // 2
        xp = F.pad(x, (0, 0, 0, 0, pad, pad))
        out = 0
        for k, conv in enumerate(self.conv_layers):
            frames = xp[:, :, k:k + t].permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
            out = out + conv(frames).reshape(b, t, -1, h, w)
        out = out.permute(0, 2, 1, 3, 4)
        if self.bias is not None:
            out = out + self.bias.view(1, -1, 1, 1, 1)
        return out


layer = ConvNd(2, 4, 3, kernel_initializer=lambda w: nn.init.uniform_(w, -0.1, 0.1))
opt = torch.optim.SGD(layer.parameters(), lr=0.01)
x = torch.randn(2, 2, 5, 6, 6)
target = torch.randn(2, 4, 5, 6, 6)
for step in range(3):
    loss = F.mse_loss(layer(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
