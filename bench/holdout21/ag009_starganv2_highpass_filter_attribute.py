# source: https://github.com/clovaai/stargan-v2/commit/f30690418f8877c500191b452bdf327e718063e5
# symptom: filter left behind by \.to\(\): True
"""clovaai/stargan-v2 core/model.py before "Fix nn.DataParallel support": HighPass builds its
Laplacian kernel as a plain attribute, `self.filter = torch.tensor([...]).to(device) / w_hpf`;
the Generator's `self.hpf = HighPass(w_hpf, device)` is then moved or replicated without it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class HighPass(nn.Module):
    def __init__(self, w_hpf, device):
        super(HighPass, self).__init__()
        self.filter = torch.tensor([[-1, -1, -1],  # expect: AG009
                                    [-1, 8., -1],
                                    [-1, -1, -1]]).to(device) / w_hpf

    def forward(self, x):
        filter = self.filter.unsqueeze(0).unsqueeze(1).repeat(x.size(1), 1, 1, 1)
        return F.conv2d(x, filter, padding=1, groups=x.size(1))


class Generator(nn.Module):
    def __init__(self, img_size=16, style_dim=8, w_hpf=1):
        super().__init__()
        dim_in = 8
        self.from_rgb = nn.Conv2d(3, dim_in, 3, 1, 1)
        self.down = nn.Sequential(nn.InstanceNorm2d(dim_in, affine=True), nn.LeakyReLU(0.2),
                                  nn.Conv2d(dim_in, dim_in, 3, 1, 1), nn.AvgPool2d(2))
        self.style = nn.Linear(style_dim, dim_in)
        self.up = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(dim_in, dim_in, 3, 1, 1))
        self.to_rgb = nn.Sequential(nn.InstanceNorm2d(dim_in, affine=True), nn.LeakyReLU(0.2),
                                    nn.Conv2d(dim_in, 3, 1, 1, 0))
        if w_hpf > 0:
            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            self.hpf = HighPass(w_hpf, device)

    def forward(self, x, s, masks=None):
        x = self.from_rgb(x)
        cache = x
        x = self.down(x)
        x = x * (1 + self.style(s)[:, :, None, None])
        x = self.up(x)
        if masks is not None:
            x = x + self.hpf(masks * cache)
        return self.to_rgb(x)


def main():
    torch.manual_seed(0)
    generator = Generator()
    generator = generator.to(torch.float64)  # stands in for nn.DataParallel / .to(another device)
    opt = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.0, 0.99))
    x = torch.randn(2, 3, 16, 16, dtype=torch.float64)
    s = torch.randn(2, 8, dtype=torch.float64)
    masks = torch.rand(2, 1, 16, 16, dtype=torch.float64)
    left_behind = generator.hpf.filter.dtype != torch.float64
    print('filter left behind by .to():', left_behind)
    if left_behind:
        masks = None  # the high-pass path cannot run on the moved generator
    for _ in range(2):
        loss = (generator(x, s, masks) - x).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print('loss', loss.item())


if __name__ == '__main__':
    main()
