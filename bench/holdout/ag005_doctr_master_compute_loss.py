# source: https://github.com/mindee/doctr/pull/379
# symptom: grad can be implicitly created only for scalar outputs
# doctr's PyTorch SAR / MASTER recognisers returned ce_loss.unsqueeze(1) from compute_loss (one loss per word),
# so the training script's train_loss.backward() raised; the PR returns ce_loss.mean().
import torch
import torch.nn as nn
import torch.nn.functional as F


class MASTER(nn.Module):
    def __init__(self, vocab_size=10, max_length=6, d_model=16):
        super().__init__()
        self.max_length = max_length
        self.feat = nn.Sequential(nn.Conv2d(3, d_model, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, max_length)))
        self.linear = nn.Linear(d_model, vocab_size + 1)

    @staticmethod
    def compute_loss(model_output, gt, seq_len):
        input_len = model_output.shape[1]
        seq_len = seq_len + 1
        cce = F.cross_entropy(model_output.permute(0, 2, 1), gt, reduction="none")
        mask_2d = torch.arange(input_len)[None, :] >= seq_len[:, None]
        cce[mask_2d] = 0
        ce_loss = cce.sum(1) / seq_len.to(dtype=torch.float32)
        return ce_loss.unsqueeze(1)

    def forward(self, x, target=None, seq_len=None):
        logits = self.linear(self.feat(x).flatten(2).permute(0, 2, 1))
        out = {"out_map": logits}
        if target is not None:
            out["loss"] = self.compute_loss(logits, target, seq_len)
        return out


def fit_one_epoch(model, train_loader, optimizer):
    model.train()
    for images, targets, seq_len in train_loader:
        train_loss = model(images, targets, seq_len)["loss"]
        optimizer.zero_grad()
        train_loss.backward()  # expect: AG005
        optimizer.step()
        print("train loss", train_loss.detach().mean().item())


torch.manual_seed(0)
model = MASTER()
loader = [(torch.randn(2, 3, 8, 24), torch.randint(0, 11, (2, 6)), torch.tensor([3, 4])) for _ in range(2)]
fit_one_epoch(model, loader, torch.optim.Adam(model.parameters(), lr=1e-3))
