# source: https://github.com/shenweichen/DeepCTR-Torch/issues/69
# symptom: graph kept after backward: True
# Clean twin: as in v0.2.2, a plain total_loss.backward().
import torch
import torch.nn as nn
import torch.nn.functional as F


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


class BaseModel(nn.Module):
    def __init__(self, n_features=6, l2_reg_embedding=1e-5):
        super().__init__()
        self.embedding = nn.Linear(n_features, 4)
        self.dnn = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.l2_reg_embedding = l2_reg_embedding

    def forward(self, X):
        return torch.sigmoid(self.dnn(self.embedding(X)))

    def get_regularization_loss(self):
        return self.l2_reg_embedding * torch.sum(self.embedding.weight ** 2)

    def compile(self, lr=0.01):
        self.optim = torch.optim.Adagrad(self.parameters(), lr=lr)
        self.loss_func = F.binary_cross_entropy

    def fit(self, x, y, batch_size=4, epochs=1):
        model = self.train()
        loss_func = self.loss_func
        optim = self.optim
        for epoch in range(epochs):
            loss_epoch = 0
            total_loss_epoch = 0
            for index in range(0, len(x), batch_size):
                x_train = x[index:index + batch_size]
                y_train = y[index:index + batch_size]
                y_pred = model(x_train).squeeze()
                optim.zero_grad()
                loss = loss_func(y_pred, y_train.squeeze(), reduction='sum')
                reg_loss = self.get_regularization_loss()
                total_loss = loss + reg_loss
                loss_epoch += loss.item()
                total_loss_epoch += total_loss.item()
                total_loss.backward()
                optim.step()
            print(f"Epoch {epoch + 1} - loss: {total_loss_epoch / len(x):.4f}")
        print("graph kept after backward:", graph_kept(total_loss))


torch.manual_seed(0)
model = BaseModel()
model.compile()
model.fit(torch.randn(12, 6), torch.randint(0, 2, (12, 1)).float())
