# source: https://github.com/EdGENetworks/attention-networks-for-classification/issues/7
# symptom: loss nan
"""attention-networks-for-classification (hierarchical attention network): `AttentionWordRNN` and
`AttentionSentRNN` allocate `bias_word` / `bias_sent` with `nn.Parameter(torch.Tensor(2 * hidden, 1))`
and initialise only the weight matrices, so the biases start as whatever memory held and the loss can
start as NaN. PyTorch's deterministic mode (`torch.utils.deterministic.fill_uninitialized_memory`)
fills uninitialised memory with NaN, which makes the garbage visible on every run.

Fixed as the thread did (`bias_word` and `bias_sent` drawn from U(-0.1, 0.1) in `__init__`; written
with `nn.init.uniform_` instead of the thread's `.data.uniform_`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)


def batch_matmul_bias(seq, weight, bias, nonlinearity=""):
    out = None
    for i in range(seq.size(0)):
        step = torch.mm(seq[i], weight) + bias.expand(bias.size(0), seq.size(1)).transpose(0, 1)
        if nonlinearity == "tanh":
            step = torch.tanh(step)
        out = step.unsqueeze(0) if out is None else torch.cat((out, step.unsqueeze(0)), 0)
    return out


def batch_matmul(seq, weight):
    out = None
    for i in range(seq.size(0)):
        step = torch.mm(seq[i], weight)
        out = step.unsqueeze(0) if out is None else torch.cat((out, step.unsqueeze(0)), 0)
    return out.squeeze(-1)


def attention_mul(rnn_outputs, att_weights):
    vectors = None
    for i in range(rnn_outputs.size(0)):
        h_i = att_weights[i].unsqueeze(1).expand_as(rnn_outputs[i]) * rnn_outputs[i]
        vectors = h_i.unsqueeze(0) if vectors is None else torch.cat((vectors, h_i.unsqueeze(0)), 0)
    return torch.sum(vectors, 0).unsqueeze(0)


class AttentionWordRNN(nn.Module):
    def __init__(self, num_tokens, embed_size, word_gru_hidden):
        super().__init__()
        self.lookup = nn.Embedding(num_tokens, embed_size)
        self.word_gru = nn.GRU(embed_size, word_gru_hidden, bidirectional=True)
        self.weight_W_word = nn.Parameter(torch.Tensor(2 * word_gru_hidden, 2 * word_gru_hidden))
        self.bias_word = nn.Parameter(torch.Tensor(2 * word_gru_hidden, 1))
        self.weight_proj_word = nn.Parameter(torch.Tensor(2 * word_gru_hidden, 1))
        self.softmax_word = nn.Softmax(dim=1)
        nn.init.uniform_(self.weight_W_word, -0.1, 0.1)
        nn.init.uniform_(self.weight_proj_word, -0.1, 0.1)
        nn.init.uniform_(self.bias_word, -0.1, 0.1)

    def forward(self, embed, state_word):
        output_word, state_word = self.word_gru(self.lookup(embed), state_word)
        word_squish = batch_matmul_bias(output_word, self.weight_W_word, self.bias_word, nonlinearity="tanh")
        word_attn = batch_matmul(word_squish, self.weight_proj_word)
        word_attn_norm = self.softmax_word(word_attn.transpose(1, 0))
        return attention_mul(output_word, word_attn_norm.transpose(1, 0)), state_word


class AttentionSentRNN(nn.Module):
    def __init__(self, sent_gru_hidden, word_gru_hidden, n_classes):
        super().__init__()
        self.sent_gru = nn.GRU(2 * word_gru_hidden, sent_gru_hidden, bidirectional=True)
        self.weight_W_sent = nn.Parameter(torch.Tensor(2 * sent_gru_hidden, 2 * sent_gru_hidden))
        self.bias_sent = nn.Parameter(torch.Tensor(2 * sent_gru_hidden, 1))
        self.weight_proj_sent = nn.Parameter(torch.Tensor(2 * sent_gru_hidden, 1))
        self.final_linear = nn.Linear(2 * sent_gru_hidden, n_classes)
        self.softmax_sent = nn.Softmax(dim=1)
        nn.init.uniform_(self.weight_W_sent, -0.1, 0.1)
        nn.init.uniform_(self.weight_proj_sent, -0.1, 0.1)
        nn.init.uniform_(self.bias_sent, -0.1, 0.1)

    def forward(self, word_attention_vectors, state_sent):
        output_sent, state_sent = self.sent_gru(word_attention_vectors, state_sent)
        sent_squish = batch_matmul_bias(output_sent, self.weight_W_sent, self.bias_sent, nonlinearity="tanh")
        sent_attn = batch_matmul(sent_squish, self.weight_proj_sent)
        sent_attn_norm = self.softmax_sent(sent_attn.transpose(1, 0))
        sent_vectors = attention_mul(output_sent, sent_attn_norm.transpose(1, 0))
        return torch.log_softmax(self.final_linear(sent_vectors.squeeze(0)), dim=1), state_sent


def train_data(batch, word_attn, sent_attn, optimizer, criterion, targets, word_hidden, sent_hidden):
    state_word = torch.zeros(2, batch.size(1), word_hidden)
    state_sent = torch.zeros(2, batch.size(1), sent_hidden)
    optimizer.zero_grad()
    s = None
    for i in range(batch.size(0)):  # sentences of the documents
        _s, state_word = word_attn(batch[i].transpose(0, 1), state_word)
        s = _s if s is None else torch.cat((s, _s), 0)
    y_pred, state_sent = sent_attn(s, state_sent)
    loss = criterion(y_pred, targets)
    loss.backward()
    optimizer.step()
    return loss.item()


def main():
    num_tokens, embed, word_hidden, sent_hidden, classes = 50, 12, 8, 8, 3
    word_attn = AttentionWordRNN(num_tokens, embed, word_hidden)
    sent_attn = AttentionSentRNN(sent_hidden, word_hidden, classes)
    optimizer = torch.optim.SGD(list(word_attn.parameters()) + list(sent_attn.parameters()), lr=0.1, momentum=0.9)
    criterion = nn.NLLLoss()
    docs = torch.randint(0, num_tokens, (4, 6, 7))  # 4 sentences, 6 documents, 7 words
    targets = torch.randint(0, classes, (6,))
    for epoch in range(3):
        loss = train_data(docs, word_attn, sent_attn, optimizer, criterion, targets, word_hidden, sent_hidden)
        print(f"epoch {epoch}: loss {'nan' if loss != loss else f'{loss:.4f}'}")


if __name__ == "__main__":
    main()
