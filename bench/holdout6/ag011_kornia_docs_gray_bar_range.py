# source: https://github.com/kornia/kornia/issues/3380
# symptom: torch.range is deprecated
"""kornia `docs/generate_examples.py`: the intensity-transform examples are rendered on a grey ramp built with
`torch.range(0, 255).repeat(1, 40, 1)` (a 1x40x256 image); the deprecation warning breaks the docs build that
runs with warnings as errors."""
import torch

torch.manual_seed(0)


def adjust_gamma(img, gamma, gain=1.0):
    return (gain * img.clamp(0, 1) ** gamma).clamp(0, 1)


def posterize(img, bits):
    levels = 2 ** bits
    return torch.floor(img * (levels - 1) + 0.5) / (levels - 1)


def equalize(img):
    flat = (img * 255).round().long().flatten()
    hist = torch.bincount(flat, minlength=256).float()
    cdf = hist.cumsum(0)
    cdf = (cdf - cdf.min()) / (cdf.max() - cdf.min())
    return cdf[flat].view_as(img)


def solarize(img, thresh=0.5):
    return torch.where(img < thresh, img, 1.0 - img)


ENHANCE_EXAMPLES = {
    "adjust_gamma": (adjust_gamma, (0.5,)),
    "posterize": (posterize, (3,)),
    "equalize": (equalize, ()),
    "solarize": (solarize, (0.6,)),
}


def main():
    bar_img_gray = torch.range(0, 255).repeat(1, 40, 1)  # expect: AG011
    bar_img = bar_img_gray.repeat(3, 1, 1) / 255.0
    out = {}
    for name, (fn, fn_args) in ENHANCE_EXAMPLES.items():
        img_out = fn(bar_img[None], *fn_args)
        out[name] = torch.cat([bar_img[None], img_out], dim=-1)
        print(f"{name}: {tuple(out[name].shape)} mean {out[name].mean().item():.3f}")
    return out


if __name__ == "__main__":
    main()
