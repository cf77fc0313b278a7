# source: https://github.com/seyonechithrananda/bert-loves-chemistry/pull/15
# symptom: normalization constants left behind by \.to\(\): True
"""ChemBERTa `chemberta/utils/roberta_regression.py` `RobertaForRegression.__init__`: the label normalization
constants are plain tensor attributes, `self.norm_mean = torch.tensor(config.norm_mean)` and
`self.norm_std = torch.tensor([...])`, moved by hand with `.cuda()` when `config.is_gpu` (always to cuda:0). `.to()`
and the multi-GPU replicas do not see them, so on the second GPU the regression loss mixes devices (pull request
#15, "register buffers for norm_mean and norm_std so they end up on the proper GPUs"). This CPU program moves the
model to float64 instead of to a GPU and reports the constants that stayed behind. The RoBERTa encoder is a small
`nn.TransformerEncoder` stand-in."""
from types import SimpleNamespace

import torch
from torch import nn
from torch.nn import MSELoss


class RobertaRegressionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.out_proj = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, features):
        x = features[:, 0, :]
        x = self.dropout(x)
        x = torch.relu(self.dense(x))
        x = self.dropout(x)
        return self.out_proj(x)


class RobertaForRegression(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_labels = config.num_labels
        self.norm_mean = torch.tensor(config.norm_mean)  # expect: AG009
        # Replace any 0 stddev norms with small constant (1e-8)
        self.norm_std = torch.tensor([label_std if label_std != 0 else 1e-8 for label_std in config.norm_std])  # expect: AG009
        if config.is_gpu:
            self.norm_mean = self.norm_mean.cuda()
            self.norm_std = self.norm_std.cuda()

        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        layer = nn.TransformerEncoderLayer(config.hidden_size, nhead=2, dim_feedforward=2 * config.hidden_size,
                                           dropout=0.0, batch_first=True)
        self.roberta = nn.TransformerEncoder(layer, num_layers=2)
        self.regression = RobertaRegressionHead(config)

    def forward(self, input_ids=None, labels=None):
        sequence_output = self.roberta(self.embeddings(input_ids))
        logits = self.regression(sequence_output)

        if labels is None:
            return self.unnormalize_logits(logits)

        if labels is not None:
            logits = self.normalize_logits(logits)
            loss_fct = MSELoss()
            loss = loss_fct(logits.view(-1), labels.view(-1))
            return loss, logits

    def normalize_logits(self, tensor):
        return (tensor - self.norm_mean) / self.norm_std

    def unnormalize_logits(self, tensor):
        return (tensor * self.norm_std) + self.norm_mean


torch.manual_seed(0)
config = SimpleNamespace(num_labels=2, norm_mean=[1.5, -0.3], norm_std=[0.7, 0.0], is_gpu=False, vocab_size=40,
                         hidden_size=16, hidden_dropout_prob=0.1)
model = RobertaForRegression(config).to(torch.float64)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
input_ids = torch.randint(0, 40, (8, 12))
labels = torch.randn(8, 2, dtype=torch.float64)
for step in range(4):
    optimizer.zero_grad()
    loss, _ = model(input_ids=input_ids, labels=labels)
    loss.backward()
    optimizer.step()
    print("step", step, "loss {:.4f}".format(loss.item()))

left_behind = model.norm_mean.dtype != torch.float64 or model.norm_std.dtype != torch.float64
print("normalization constants left behind by .to():", left_behind)
