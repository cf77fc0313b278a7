# source: https://github.com/pstage-ocr-team6/ocr-teamcode/pull/26
# symptom: gradients carried over from the previous step: True
"""OCR team code (math formula recognition): `run_epoch` trains and validates with one function.

The change before the pull request reorganised the training branch (mixed precision with a GradScaler,
gradient clipping, a per-step LR scheduler) and `optimizer.zero_grad()` was left out, so each step's
backward adds onto the gradients of every earlier step. Written for this set: a tiny attention-free
encoder/decoder stands in for the SATRN/ASTER models, random images and token sequences stand in for the
data set.
"""
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)

PAD, START, END = 0, 1, 2
VOCAB = 12
SEQ = 6


class FormulaDataset(torch.utils.data.Dataset):
    def __init__(self, n):
        self.items = []
        for _ in range(n):
            image = torch.randn(1, 16, 32)
            body = [random.randint(3, VOCAB - 1) for _ in range(random.randint(2, SEQ - 2))]
            encoded = [START] + body + [END]
            encoded = encoded + [-1] * (SEQ - len(encoded))
            self.items.append({"image": image, "truth": {"encoded": torch.tensor(encoded)}})
        self.token_to_id = {"<PAD>": PAD}

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class TinyRecognizer(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((2, 4)), nn.Flatten(),
            nn.Linear(8 * 2 * 4, hidden),
        )
        self.embedding = nn.Embedding(VOCAB, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, images, expected, is_train, teacher_forcing_ratio):
        h = torch.tanh(self.encoder(images))
        token = expected[:, 0]
        logits = []
        for t in range(1, expected.size(1)):
            h = self.cell(self.embedding(token), h)
            step = self.out(h)
            logits.append(step)
            if is_train and random.random() < teacher_forcing_ratio:
                token = expected[:, t]
            else:
                token = step.argmax(-1)
        return torch.stack(logits, dim=1)


def run_epoch(data_loader, model, epoch_text, criterion, optimizer, lr_scheduler,
              teacher_forcing_ratio, max_grad_norm, device, scaler=None, train=True):
    torch.set_grad_enabled(train)
    model.train() if train else model.eval()

    def _infer(input, expected):
        output = model(input, expected, train, teacher_forcing_ratio)
        decoded_values = output.transpose(1, 2)
        _, sequence = torch.topk(decoded_values, 1, dim=1)
        loss = criterion(decoded_values, expected[:, 1:])
        return loss, sequence.squeeze(1)

    losses, grad_norms, carried = [], [], False
    for d in data_loader:
        input = d["image"].to(device)
        expected = d["truth"]["encoded"].to(device)
        expected[expected == -1] = data_loader.dataset.token_to_id["<PAD>"]
        loss, sequence = _infer(input, expected)
        if train:
            optim_params = [p for group in optimizer.param_groups for p in group["params"]]
            carried = carried or any(p.grad is not None and p.grad.abs().sum() > 0 for p in optim_params)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                grad_norms.append(nn.utils.clip_grad_norm_(optim_params, max_norm=max_grad_norm))
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                grad_norms.append(nn.utils.clip_grad_norm_(optim_params, max_norm=max_grad_norm))
                optimizer.step()  # expect: AG016
            lr_scheduler.step()
        losses.append(loss.item())
    torch.set_grad_enabled(True)
    return {"loss": sum(losses) / len(losses), "carried": carried}


def main():
    device = torch.device("cpu")
    train_loader = torch.utils.data.DataLoader(FormulaDataset(48), batch_size=8, shuffle=True)
    valid_loader = torch.utils.data.DataLoader(FormulaDataset(16), batch_size=8)
    model = TinyRecognizer().to(device)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    carried = False
    for epoch in range(2):
        train_result = run_epoch(train_loader, model, f"[{epoch + 1}/2]", criterion, optimizer, lr_scheduler,
                                 0.5, 2.0, device, scaler=None, train=True)
        valid_result = run_epoch(valid_loader, model, f"[{epoch + 1}/2]", criterion, optimizer, lr_scheduler,
                                 0.0, 2.0, device, scaler=None, train=False)
        carried = carried or train_result["carried"]
        print(f"epoch {epoch}: train loss {train_result['loss']:.3f} valid loss {valid_result['loss']:.3f}")
    print(f"gradients carried over from the previous step: {carried}")


if __name__ == "__main__":
    main()
