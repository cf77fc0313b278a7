# source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
# symptom: a view of a leaf Variable that requires grad is being used in an in-place operation
# 6_edit_knowledge_sampled.py edits knowledge neurons by subtracting/adding embeddings into columns of
# model.bert.encoder.layer[layer].output.dense.weight[:, pos] in place. Re-created with a tiny BERT-shaped module tree.
import torch
import torch.nn as nn


class Output(nn.Module):
    def __init__(self, inter, hidden):
        super().__init__()
        self.dense = nn.Linear(inter, hidden)


class Layer(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.intermediate = nn.Linear(hidden, inter)
        self.output = Output(inter, hidden)

    def forward(self, h):
        return h + self.output.dense(torch.relu(self.intermediate(h)))


class Encoder(nn.Module):
    def __init__(self, n, hidden, inter):
        super().__init__()
        self.layer = nn.ModuleList(Layer(hidden, inter) for _ in range(n))


class Bert(nn.Module):
    def __init__(self, vocab, hidden=16, inter=32, n=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.encoder = Encoder(n, hidden, inter)


class BertForMaskedLM(nn.Module):
    def __init__(self, vocab=30):
        super().__init__()
        self.bert = Bert(vocab)
        self.cls = nn.Linear(16, vocab)

    def forward(self, ids):
        h = self.bert.embeddings(ids)
        for layer in self.bert.encoder.layer:
            h = layer(h)
        return self.cls(h)


torch.manual_seed(0)
model = BertForMaskedLM()
word_embeddings = model.bert.embeddings.weight
ori_pred_emb = word_embeddings[3].detach()
tgt_emb = word_embeddings[7].detach()
kn_bag = [[0, 5], [1, 9]]
lambda_list_1 = [0.5, 0.5]
lambda_list_2 = [0.7, 0.7]
for i, (layer, pos) in enumerate(kn_bag):
    model.bert.encoder.layer[layer].output.dense.weight[:, pos] -= ori_pred_emb * lambda_list_1[i]  # expect: AG001
    model.bert.encoder.layer[layer].output.dense.weight[:, pos] += tgt_emb * lambda_list_2[i]  # expect: AG001
print(model(torch.tensor([[1, 2, 3]])).argmax(-1))
