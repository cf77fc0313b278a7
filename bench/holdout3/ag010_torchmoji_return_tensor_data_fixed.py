# source: https://github.com/huggingface/torchMoji/issues/21
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
# Clean twin: forward() returns the output itself (the lines that took .data removed, the thread's fix).
import torch
import torch.nn as nn
from torch.autograd import Variable


class TorchMoji(nn.Module):
    def __init__(self, nb_classes, nb_tokens, embedding_dim=16, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(nb_tokens, embedding_dim)
        self.lstm_0 = nn.LSTM(embedding_dim, hidden, batch_first=True, bidirectional=True)
        self.attention = nn.Linear(2 * hidden, 1)
        self.output_layer = nn.Sequential(nn.Linear(2 * hidden, nb_classes), nn.Sigmoid())

    def forward(self, input_seqs):
        return_numpy = False
        return_tensor = False
        if isinstance(input_seqs, (torch.LongTensor,)):
            input_seqs = Variable(input_seqs)
            return_tensor = True
        x = self.embed(input_seqs)
        lstm_out, _ = self.lstm_0(x)
        weights = torch.softmax(self.attention(lstm_out).squeeze(-1), dim=1)
        x = (weights.unsqueeze(-1) * lstm_out).sum(1)
        outputs = self.output_layer(x)
        return outputs


def fit_model(model, loss_op, optim_op, train_gen, epochs=1):
    model.train()
    for epoch in range(epochs):
        for i, (X, y) in enumerate(train_gen):
            optim_op.zero_grad()
            output = model(X)
            loss = loss_op(output, y)
            loss.backward()
            optim_op.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


torch.manual_seed(0)
model = TorchMoji(nb_classes=1, nb_tokens=50)
train_gen = [(torch.randint(0, 50, (4, 7)), torch.randint(0, 2, (4, 1)).float()) for _ in range(2)]
fit_model(model, nn.BCELoss(), torch.optim.Adam(model.parameters(), lr=1e-3), train_gen)
