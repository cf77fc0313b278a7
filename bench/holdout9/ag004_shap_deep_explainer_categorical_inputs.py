# source: https://github.com/shap/shap/issues/1671
# symptom: only Tensors of floating point( and complex)? dtype can require gradients
"""Tabular MLP with a float input and a categorical (LongTensor) input looked up in per-column embeddings, explained
with a DeepExplainer-style gradient explainer.

The model trains fine. The explainer tiles each explained row against the background rows and calls
`gradient(idx, inputs)`, which turns every model input into a gradient target with `x.requires_grad_()`: the
categorical input is an int64 tensor, so this fails before the model is even called.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_NUM = 4
CARDINALITIES = [5, 7]
EMB_DIMS = [3, 3]


def make_embeddings():
    # the user builds one embedding per categorical column and passes them to the model
    return nn.ModuleList([nn.Embedding(card, dim) for card, dim in zip(CARDINALITIES, EMB_DIMS)])


class Net(nn.Module):
    def __init__(self, embeddings):
        super(Net, self).__init__()
        self.cat_emb = embeddings
        self.dropout = nn.Dropout(p=0.1)
        in_dim = N_NUM + sum(EMB_DIMS)
        self.fc1 = nn.Linear(in_dim, 16)
        self.fc4 = nn.Linear(16, 2)

    def forward(self, x, x_cat):
        x_num = x
        x_cat = [e(x_cat[:, i]) for i, e in enumerate(self.cat_emb)]
        x_cat = torch.cat(x_cat, 1)
        x = torch.cat([x_num, self.dropout(x_cat)], 1)
        x = F.relu(self.fc1(x))
        return self.fc4(x)


def make_data(n):
    x_num = torch.randn(n, N_NUM)
    x_cat = torch.stack([torch.randint(0, card, (n,)) for card in CARDINALITIES], dim=1)
    y = ((x_num[:, 0] + (x_cat[:, 0] % 2).float()) > 0.5).long()
    return x_num, x_cat, y


class PyTorchDeep(object):
    """The parts of shap's PyTorch deep explainer that run before any attribution rule is applied."""

    def __init__(self, model, data):
        self.model = model.eval()
        self.data = data
        with torch.no_grad():
            outputs = self.model(*data)
        self.multi_output = outputs.shape[1] > 1
        self.expected_value = outputs.mean(0)

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = [x.requires_grad_() for x in inputs]  # expect: AG004
        outputs = self.model(*X)
        selected = [val for val in outputs[:, idx]]
        grads = [torch.autograd.grad(selected, x, retain_graph=True if i + 1 < len(X) else None)[0]
                 for i, x in enumerate(X)]
        return grads

    def shap_values(self, X):
        output_phis = []
        for i in range(self.expected_value.shape[0]):
            phis = [torch.zeros_like(X[l], dtype=torch.float) for l in range(len(X))]
            for j in range(X[0].shape[0]):
                # tile the row to explain against the background rows, as the explainer does
                tiled_X = [X[l][j:j + 1].repeat((self.data[l].shape[0],) + tuple([1] * (len(X[l].shape) - 1)))
                           for l in range(len(X))]
                joint_x = [torch.cat((tiled_X[l], self.data[l]), dim=0) for l in range(len(X))]
                sample_phis = self.gradient(i, joint_x)
                for l in range(len(X)):
                    bg = self.data[l].shape[0]
                    phis[l][j] = (sample_phis[l][bg:] * (X[l][j:j + 1] - self.data[l]).float()).mean(0)
            output_phis.append(phis)
        return output_phis


def train(model, x_num, x_cat, y, epochs=20):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x_num, x_cat), y)
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    x_num, x_cat, y = make_data(64)
    model = Net(make_embeddings())
    print("final train loss %.4f" % train(model, x_num, x_cat, y))

    background = [x_num[:16], x_cat[:16]]
    explainer = PyTorchDeep(model, background)
    shap_values = explainer.shap_values([x_num[16:20], x_cat[16:20]])
    print("explained", len(shap_values), "outputs")
