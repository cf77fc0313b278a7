# source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685
# symptom: modified by an inplace operation
"""A blog post's LSTM language-model loop: `h0, c0` are created once per epoch and the model's returned state is fed
into the next batch. The first error ("Trying to backward through the graph a second time") was silenced with
`loss.backward(retain_graph=True)`; the next batch then backpropagates through the previous batch's retained graph
after `optimizer.step()` has updated the LSTM weights in place, and fails with the version-counter error the post
quotes.

Fixed where the post locates the problem, the LSTM hidden state: the carried state is detached before each batch
(truncated backpropagation), so each backward walks only its own batch's graph and `retain_graph` is dropped (the
stored excerpt of the post is cut off after its analysis)."""
import torch
import torch.nn as nn

EPOCH = 2
num_layers, batch_size, hidden_dim, embedding_dim, seq_len = 1, 4, 8, 6, 5


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (h, c) = self.lstm(x, (h0, c0))
        return self.fc(out), (h, c)


torch.manual_seed(0)
data = [(torch.randn(batch_size, seq_len, embedding_dim), torch.randn(batch_size, seq_len, embedding_dim))
        for _ in range(4)]
lstm = LSTMModel()
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-3)
batch_count = len(data)

for epoch in range(EPOCH):
    batch_num = 0
    h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    for batch in data:
        optimizer.zero_grad()
        h0, c0 = h0.detach(), c0.detach()
        output, (h0, c0) = lstm(batch[0], h0, c0)
        loss = loss_fn(output.reshape(-1, embedding_dim), batch[1].reshape(-1, embedding_dim))
        loss.backward()
        optimizer.step()
        batch_num += 1
        if batch_num % min(10, batch_count // 2) == 0:
            print(f"epoch {epoch} : batch {batch_num} : {loss.item():.4f}")
