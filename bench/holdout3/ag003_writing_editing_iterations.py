# source: https://github.com/EagleW/Writing-editing-Network/issues/3
# symptom: graph kept after backward: True
# The Writing-editing Network trainer runs the decoder num_exams times per batch (a first draft, then edits that
# read the previous draft's token ids) and calls loss.backward(retain_graph=True) each pass; every pass builds its
# own graph, so removing it "doesn't seem to have any impact" (the author agreed it can go).
import torch
import torch.nn as nn


def graph_kept(t):
    """True when a saved tensor of t's graph can still be read (backward freed nothing)."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for name in dir(node):
            if name.startswith("_saved_"):
                try:
                    if isinstance(getattr(node, name), torch.Tensor):
                        return True
                except RuntimeError:
                    return False
        stack.extend(n for n, _ in node.next_functions)
    return False


class FbSeq2seq(nn.Module):
    def __init__(self, vocab=20, hidden=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.title_encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.draft_encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, titles, prev_generated):
        _, h_title = self.title_encoder(self.embedding(titles))
        states, _ = self.draft_encoder(self.embedding(prev_generated))
        ctx = h_title[-1].unsqueeze(1).expand_as(states)
        return self.out(torch.cat([states, ctx], dim=-1))


class Trainer:
    def __init__(self, model, num_exams=3):
        self.model = model
        self.num_exams = num_exams
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.criterion = nn.CrossEntropyLoss()

    def train_batch(self, titles, abstracts):
        prev_generated = torch.zeros_like(abstracts)
        for i in range(self.num_exams):
            self.optimizer.zero_grad()
            logits = self.model(titles, prev_generated)
            loss = self.criterion(logits.reshape(-1, logits.size(-1)), abstracts.reshape(-1))
            loss.backward(retain_graph=True)  # expect: AG003
            self.optimizer.step()
            prev_generated = logits.argmax(-1)
        return loss

    def train(self, batches, epochs=1):
        for epoch in range(epochs):
            for titles, abstracts in batches:
                loss = self.train_batch(titles, abstracts)
            print(f"epoch {epoch}: loss {loss.item():.4f}")
        print("graph kept after backward:", graph_kept(loss))


torch.manual_seed(0)
batches = [(torch.randint(0, 20, (2, 4)), torch.randint(0, 20, (2, 6))) for _ in range(2)]
Trainer(FbSeq2seq()).train(batches)
