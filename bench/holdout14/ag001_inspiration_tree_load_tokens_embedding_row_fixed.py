"""Inspiration Tree's load_tokens writing the learned token rows under torch.no_grad() (clean twin).

`utils.load_tokens(pipe, data, device)` adds the concept tokens to the tokenizer, resizes the text encoder's token
embedding, and then assigns `pipe.text_encoder.text_model.embeddings.token_embedding.weight[ref_indx] = embd_cur`
for each token. The embedding weight is a Parameter that requires grad, so loading the learned nodes stops with
"a view of a leaf Variable that requires grad is being used in an in-place operation".

Clean twin: the fix given in the thread (by the reporter and a later comment): the embedding rows are written inside
`with torch.no_grad():`.
"""
# source: https://github.com/google/inspiration_tree/issues/25
# symptom: leaf Variable that requires grad is being used in an in-place operation
import torch
import torch.nn as nn


class Tokenizer:
    def __init__(self, vocab):
        self.vocab = {tok: i for i, tok in enumerate(vocab)}

    def __len__(self):
        return len(self.vocab)

    def add_tokens(self, tokens):
        added = 0
        for tok in tokens:
            if tok not in self.vocab:
                self.vocab[tok] = len(self.vocab)
                added += 1
        return added

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[t] for t in tokens]


class Embeddings(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, dim)
        self.position_embedding = nn.Embedding(16, dim)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        return self.token_embedding(ids) + self.position_embedding(pos)[None]


class TextModel(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embeddings = Embeddings(vocab_size, dim)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 2, 2 * dim, batch_first=True), 1)

    def forward(self, ids):
        return self.encoder(self.embeddings(ids))


class TextEncoder(nn.Module):
    def __init__(self, vocab_size, dim=16):
        super().__init__()
        self.text_model = TextModel(vocab_size, dim)

    def resize_token_embeddings(self, new_size):
        old = self.text_model.embeddings.token_embedding
        new = nn.Embedding(new_size, old.embedding_dim)
        with torch.no_grad():
            new.weight[: old.num_embeddings] = old.weight
        self.text_model.embeddings.token_embedding = new

    def forward(self, ids):
        return self.text_model(ids)


class Pipe:
    def __init__(self):
        self.tokenizer = Tokenizer(["a", "photo", "of", "sculpture", "cat", "in", "the", "style"])
        self.text_encoder = TextEncoder(len(self.tokenizer))

    def encode_prompt(self, prompt):
        ids = torch.tensor([self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(prompt))])
        return self.text_encoder(ids)


def load_tokens(pipe, data, device):
    """Adds the new learned tokens into the predefined dictionary of pipe."""
    added_tokens = list(data.keys())
    pipe.tokenizer.add_tokens(added_tokens)
    pipe.text_encoder.resize_token_embeddings(len(pipe.tokenizer))
    for token_ in data.keys():
        ref_token = pipe.tokenizer.tokenize(token_)
        ref_indx = pipe.tokenizer.convert_tokens_to_ids(ref_token)[0]
        embd_cur = data[token_].to(device)
        with torch.no_grad():
            pipe.text_encoder.text_model.embeddings.token_embedding.weight[ref_indx] = embd_cur


def main():
    torch.manual_seed(0)
    pipe = Pipe()
    learned = {"<Vl>": torch.randn(16), "<Vr>": torch.randn(16)}
    load_tokens(pipe, learned, "cpu")
    print("Prompts loaded to pipe ...")
    for prompt in ["<Vl>", "<Vr>", "<Vl> <Vr>"]:
        with torch.no_grad():
            cond = pipe.encode_prompt(f"a photo of {prompt}")
        print(prompt, tuple(cond.shape), f"{cond.norm().item():.3f}")


if __name__ == "__main__":
    main()
