# source: https://github.com/snakers4/silero-vad/pull/699
# symptom: gradients accumulated across steps: True
"""Twin (the pull request's fix: `optimizer.zero_grad()` before `loss.backward()`). silero-vad `tuning/utils.py` `train()`: the frozen JIT model's STFT and encoder feed the trainable
`VADDecoderRNNJIT` chunk by chunk; each batch computes the masked BCE loss, `loss.backward()` and `optimizer.step()`,
but no `optimizer.zero_grad()` was called, so the decoder's gradients piled up over the epoch."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class VADDecoderRNNJIT(nn.Module):
    def __init__(self):
        super(VADDecoderRNNJIT, self).__init__()
        self.rnn = nn.LSTMCell(16, 16)
        self.decoder = nn.Sequential(nn.Dropout(0.1), nn.ReLU(), nn.Conv1d(16, 1, kernel_size=1), nn.Sigmoid())

    def forward(self, x, state=torch.zeros(0)):
        x = x.squeeze(-1)
        if len(state):
            h, c = self.rnn(x, (state[0], state[1]))
        else:
            h, c = self.rnn(x)
        x = h.unsqueeze(-1).float()
        state = torch.stack([h, c])
        x = self.decoder(x)
        return x, state


class FrozenStft(nn.Module):
    def forward(self, x):
        return x.unfold(1, 32, 32).abs().mean(-1)


class FrozenEncoder(nn.Module):
    def __init__(self, n_in, n_out=16):
        super().__init__()
        self.proj = nn.Linear(n_in, n_out)

    def forward(self, x):
        return torch.relu(self.proj(x)).unsqueeze(-1)


class JitModel(nn.Module):
    """Stand-in for the pretrained `torch.jit.load`ed model whose stft and encoder are reused."""

    def __init__(self, context_size, num_samples):
        super().__init__()
        self.stft = FrozenStft()
        self.encoder = FrozenEncoder((context_size + num_samples) // 32)
        self.requires_grad_(False)


class Config:
    tune_8k = False
    learning_rate = 1e-3


accumulated = False


def train(config, loader, jit_model, decoder, criterion, optimizer, device):
    global accumulated
    losses = AverageMeter()
    decoder.train()

    context_size = 32 if config.tune_8k else 64
    num_samples = 256 if config.tune_8k else 512
    stft_layer = jit_model.stft
    encoder_layer = jit_model.encoder

    with torch.enable_grad():
        for _, (x, targets, masks) in enumerate(loader):
            targets = targets.to(device)
            x = x.to(device)
            masks = masks.to(device)
            x = torch.nn.functional.pad(x, (context_size, 0))

            outs = []
            state = torch.zeros(0)
            for i in range(context_size, x.shape[1], num_samples):
                input_ = x[:, i - context_size:i + num_samples]
                out = stft_layer(input_)
                out = encoder_layer(out)
                out, state = decoder(out, state)
                outs.append(out)
            stacked = torch.cat(outs, dim=2).squeeze(1)

            loss = criterion(stacked, targets)
            loss = (loss * masks).mean()
            optimizer.zero_grad()
            if any(p.grad is not None and p.grad.abs().sum() > 0 for p in decoder.parameters()):
                accumulated = True
            loss.backward()
            optimizer.step()
            losses.update(loss.item(), masks.numel())

    return losses.avg


config = Config()
device = torch.device('cpu')
jit_model = JitModel(64, 512)
decoder = VADDecoderRNNJIT()
criterion = nn.BCELoss(reduction='none')
optimizer = torch.optim.SGD(decoder.parameters(), lr=config.learning_rate)
loader = [(torch.randn(2, 512 * 4), (torch.rand(2, 4) > 0.5).float(), torch.ones(2, 4)) for _ in range(3)]
for epoch in range(2):
    print(f"epoch {epoch} | train loss {train(config, loader, jit_model, decoder, criterion, optimizer, device):.4f}")
print(f"gradients accumulated across steps: {accumulated}")
