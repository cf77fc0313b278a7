# source: https://github.com/affaan-m/ECC/pull/3122
# symptom: gradients accumulated across steps: True
# Clean twin: optimizer.zero_grad() before each batch's loss, the review's suggestion.
import torch
import torch.nn as nn


class GPTModel(nn.Module):
    def __init__(self, vocab_size=32, emb_dim=8, context_length=6):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, emb_dim)
        self.pos_emb = nn.Embedding(context_length, emb_dim)
        self.out_head = nn.Linear(emb_dim, vocab_size, bias=False)

    def forward(self, in_idx):
        pos = torch.arange(in_idx.shape[1])
        return self.out_head(self.tok_emb(in_idx) + self.pos_emb(pos))


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


def train_model_simple(model, train_loader, optimizer, device, num_epochs):
    grad_sizes = []
    model.train()
    for epoch in range(num_epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = calc_loss_batch(x, y, model, device)
            loss.backward(); optimizer.step()
            grad_sizes.append(model.out_head.weight.grad.abs().sum().item())
    return grad_sizes


torch.manual_seed(123)
model = GPTModel()
data = torch.randint(0, 32, (1, 7))
train_loader = [(data[:, :-1], data[:, 1:])] * 3
optimizer = torch.optim.AdamW(model.parameters(), lr=0.0, weight_decay=0.1)
sizes = train_model_simple(model, train_loader, optimizer, torch.device("cpu"), num_epochs=1)
print("gradients accumulated across steps:", sizes[2] > 2.5 * sizes[0])
