# source: written for bench/holdout5 (short training program, character-level GRU over a stream, hidden state carried across chunks)
# symptom: modified by an inplace operation|backward through the graph a second time
import torch
from torch import nn

torch.manual_seed(5)

vocab, hidden_size, chunk = 12, 24, 8
stream = torch.randint(0, vocab, (200,))

embed = nn.Embedding(vocab, 16)
rnn = nn.GRU(16, hidden_size, batch_first=True)
head = nn.Linear(hidden_size, vocab)
params = list(embed.parameters()) + list(rnn.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.1)
loss_fn = nn.CrossEntropyLoss()

h = torch.zeros(1, 1, hidden_size)
losses = []
for start in range(0, len(stream) - chunk - 1, chunk):
    inp = stream[start:start + chunk].unsqueeze(0)
    tgt = stream[start + 1:start + chunk + 1].unsqueeze(0)
    out, h = rnn(embed(inp), h)
    loss = loss_fn(head(out).reshape(-1, vocab), tgt.reshape(-1))
    opt.zero_grad()
    loss.backward(retain_graph=True)  # expect: AG003
    opt.step()
    losses.append(loss.item())

print("chunks:", len(losses), "mean loss:", round(sum(losses) / len(losses), 4))
