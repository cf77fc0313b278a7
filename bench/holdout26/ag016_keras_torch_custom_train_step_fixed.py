# source: https://github.com/fchollet/deep-learning-with-python-notebooks/issues/293 (pattern: custom model class with a PyTorch-backend train_step computes the loss, calls backward and optimizer.step() but never zeroes the gradients)
# symptom: grads accumulate across steps: True
"""A model subclass that overrides train_step, in the style of the book's PyTorch-backend example.

Fixed: train_step calls `self.optimizer.zero_grad()` before `loss.backward()`.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class CustomModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense1 = nn.Linear(10, 32)
        self.dense2 = nn.Linear(32, 1)
        self.loss_fn = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.01)
        self.grad_norms = []

    def forward(self, x):
        return self.dense2(torch.relu(self.dense1(x)))

    def train_step(self, data):
        x, y = data
        y_pred = self(x)
        loss = self.loss_fn(y_pred, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.grad_norms.append(self.dense2.weight.grad.norm().item())
        self.optimizer.step()
        return {"loss": loss.item()}

    def fit(self, x, y, epochs=1, batch_size=16):
        for epoch in range(epochs):
            for i in range(0, len(x), batch_size):
                logs = self.train_step((x[i:i + batch_size], y[i:i + batch_size]))
            print(f"epoch {epoch + 1}: {logs}")


x = torch.randn(128, 10)
y = x.sum(dim=1, keepdim=True)
model = CustomModel()
model.fit(x, y, epochs=2)

print("grads accumulate across steps:", model.grad_norms[-1] > 3 * model.grad_norms[0])
