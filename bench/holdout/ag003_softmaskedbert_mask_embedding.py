# source: https://github.com/hiyoung123/SoftMaskedBert/issues/16
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
# model/soft_masked_bert.py builds self.mask_e = self.embedding(mask_token_id) once in __init__ and mixes it into
# every forward (the BERT embeddings end in a LayerNorm, which saves its weight); train.py calls loss.backward(retain_graph=True) so the shared embedding graph survives, and after the
# first optimizer.step() the retained graph holds a stale version of the embedding weight (reported on torch >= 1.5).
import torch
import torch.nn as nn


class BiGRU(nn.Module):
    def __init__(self, embedding_size, hidden):
        super().__init__()
        self.rnn = nn.GRU(embedding_size, hidden, batch_first=True, bidirectional=True)
        self.linear = nn.Linear(2 * hidden, 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        return torch.sigmoid(self.linear(out))


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, embedding_size):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, embedding_size)
        self.LayerNorm = nn.LayerNorm(embedding_size)

    def forward(self, input_ids):
        return self.LayerNorm(self.word_embeddings(input_ids))


class SoftMaskedBert(nn.Module):
    def __init__(self, vocab_size=30, embedding_size=16, hidden=8, mask_token_id=3):
        super().__init__()
        self.embedding = BertEmbeddings(vocab_size, embedding_size)
        self.detector = BiGRU(embedding_size, hidden)
        self.corrector = nn.Linear(embedding_size, vocab_size)
        self.mask_e = self.embedding(torch.tensor([[mask_token_id]], dtype=torch.long))  # expect: AG002

    def forward(self, input_ids):
        e = self.embedding(input_ids)
        p = self.detector(e)
        e_ = p * self.mask_e + (1 - p) * e
        return self.corrector(e_ + e), p


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.optim = torch.optim.Adam(model.parameters(), lr=lr)
        self.criterion_c = nn.CrossEntropyLoss()
        self.criterion_d = nn.BCELoss()

    def train(self, data, gama=0.8):
        self.model.train()
        for step, (input_ids, label, det_label) in enumerate(data):
            out, prob = self.model(input_ids)
            loss_d = self.criterion_d(prob.squeeze(-1), det_label)
            loss_c = self.criterion_c(out.view(-1, out.size(-1)), label.view(-1))
            loss = gama * loss_c + (1 - gama) * loss_d
            self.optim.zero_grad()
            loss.backward(retain_graph=True)  # expect: AG003
            self.optim.step()
            print(f"step {step} loss {loss.item():.4f}")


torch.manual_seed(0)
batches = [(torch.randint(0, 30, (2, 5)), torch.randint(0, 30, (2, 5)), torch.randint(0, 2, (2, 5)).float()) for _ in range(3)]
Trainer(SoftMaskedBert()).train(batches)
