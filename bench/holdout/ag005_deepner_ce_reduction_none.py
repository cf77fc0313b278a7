# source: https://github.com/z814081807/DeepNER/issues/19
# symptom: grad can be implicitly created only for scalar outputs
# src/utils/model_utils.py builds the span/CRF model's criterion as nn.CrossEntropyLoss(reduction='none'), so the
# loss the model returns is one value per token and train.py's loss.backward() fails (the fix: the default 'mean').
import torch
import torch.nn as nn


class SpanModel(nn.Module):
    def __init__(self, vocab=50, hidden=16, num_tags=5, loss_type='ce'):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.start_fc = nn.Linear(hidden, num_tags)
        reduction = 'none'
        if loss_type == 'ce':
            self.criterion = nn.CrossEntropyLoss(reduction=reduction)

    def forward(self, token_ids, attention_masks, start_ids=None):
        seq_out, _ = self.encoder(self.embed(token_ids))
        start_logits = self.start_fc(seq_out)
        out = (start_logits,)
        if start_ids is not None:
            active = attention_masks.view(-1) == 1
            start_loss = self.criterion(start_logits.view(-1, start_logits.size(-1))[active], start_ids.view(-1)[active])
            out = (start_loss,) + out
        return out


def train(model, train_loader, epochs=1):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    model.train()
    for epoch in range(epochs):
        for step, batch_data in enumerate(train_loader):
            loss = model(**batch_data)[0]
            model.zero_grad()
            loss.backward()  # expect: AG005
            optimizer.step()
            print(f"epoch {epoch} step {step} loss {loss.mean().item():.4f}")


torch.manual_seed(0)
loader = [dict(token_ids=torch.randint(0, 50, (2, 6)), attention_masks=torch.ones(2, 6, dtype=torch.long),
               start_ids=torch.randint(0, 5, (2, 6))) for _ in range(2)]
train(SpanModel(), loader)
