# source: https://github.com/suolyer/PyTorch_BERT_Biaffine_NER/pull/3
# symptom: logits contain nan: True
# Clean twin: the biaffine weight is created initialised (torch.randn), as the PR did.
import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True


class biaffine(nn.Module):
    def __init__(self, in_size, out_size, bias_x=True, bias_y=True):
        super().__init__()
        self.bias_x = bias_x
        self.bias_y = bias_y
        self.out_size = out_size
        self.U = torch.nn.Parameter(torch.randn(in_size + int(bias_x), out_size, in_size + int(bias_y)))

    def forward(self, x, y):
        if self.bias_x:
            x = torch.cat((x, torch.ones_like(x[..., :1])), dim=-1)
        if self.bias_y:
            y = torch.cat((y, torch.ones_like(y[..., :1])), dim=-1)
        return torch.einsum("bxi,ioj,byj->bxyo", x, self.U, y)


class myModel(nn.Module):
    def __init__(self, hidden=16, num_label=4):
        super().__init__()
        self.encoder = nn.Embedding(30, hidden)
        self.start_layer = nn.Sequential(nn.Linear(hidden, 8), nn.ReLU())
        self.end_layer = nn.Sequential(nn.Linear(hidden, 8), nn.ReLU())
        self.biaffne_layer = biaffine(8, num_label)

    def forward(self, input_ids):
        h = self.encoder(input_ids)
        return self.biaffne_layer(self.start_layer(h), self.end_layer(h))


torch.manual_seed(0)
model = myModel()
logits = model(torch.randint(0, 30, (2, 5)))
print("logits contain nan:", bool(torch.isnan(logits).any()))
