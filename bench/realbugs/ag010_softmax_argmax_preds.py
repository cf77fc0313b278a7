# source: https://php.bkmy88.com/faq/1835025.html
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
# A classification loop computes the loss on hard predictions: softmax(logits).argmax(dim=1).type(float32)
# is fed to loss_fn together with y_train (and to an accuracy helper); loss.backward() raises.
import torch
import torch.nn as nn

torch.manual_seed(0)


def accuracy(y_true, y_pred):
    correct = torch.eq(y_true, y_pred).sum().item()
    return correct / len(y_pred) * 100


X_train = torch.randn(60, 2)
y_train = (X_train[:, 0] * X_train[:, 1] > 0).float()


class CircleModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer_1 = nn.Linear(2, 10)
        self.layer_2 = nn.Linear(10, 2)

    def forward(self, x):
        return self.layer_2(torch.relu(self.layer_1(x)))


model = CircleModel()
loss_fn = nn.MSELoss()
optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
Epochs = 3

for epoch in range(Epochs):
    model.train()
    train_logits = model(X_train)
    train_preds_probs = torch.softmax(train_logits, dim=1).argmax(dim=1).type(torch.float32)
    loss = loss_fn(train_preds_probs, y_train)
    train_accu = accuracy(y_train, train_preds_probs)
    print(train_preds_probs[:5])
    optimiser.zero_grad()
    loss.backward()  # expect: AG010
    optimiser.step()
    print(f"epoch {epoch} loss {loss.item():.3f} acc {train_accu:.1f}")
