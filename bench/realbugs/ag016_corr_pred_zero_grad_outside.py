# source: https://github.com/salesforce/corr_based_prediction/issues/1
# symptom: gradients accumulated across \d+ steps: True
# main.py's train(epoch) calls optimizer.zero_grad() once, before the batch loop; inside the loop it does
# total_loss_.backward() and optimizer.step() every batch, so gradients accumulate along the training data.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GradWatch:
    """Records, for one parameter, each backward's own gradient (tensor hook) and the .grad left after it."""

    def __init__(self, param):
        self.param, self.fresh, self.after = param, [], []
        param.register_hook(lambda g: self.fresh.append(g.clone()))

    def record(self):
        self.after.append(self.param.grad.clone())

    def report(self):
        accumulated = torch.allclose(self.after[-1], torch.stack(self.fresh).sum(0)) and len(self.fresh) > 1
        print(f"gradients accumulated across {len(self.fresh)} steps: {accumulated}")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(10, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x, ret_hid=False):
        h = torch.relu(self.hidden(x))
        return (self.out(h), h) if ret_hid else self.out(h)


def entropy_reg(hid_repr, targets):
    # a stand-in for the paper's correlation-based regulariser on the hidden representation
    return hid_repr.var(dim=0).mean()


class Args:
    beta = 0.1
    lr = 1e-3
    wdecay = 0.0
    epochs = 1


args = Args()
model = MLP()
criterion = nn.CrossEntropyLoss()
trainloader = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(4)]
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.wdecay)
watch = GradWatch(model.out.weight)


def train(epoch):
    global trainloader, optimizer, args, model
    model.train()
    correct = 0
    total = 0
    total_loss, tot_regularization_loss = 0, 0

    optimizer.zero_grad()
    tot_iters = len(trainloader)
    for batch_idx in range(tot_iters):
        inputs, targets = trainloader[batch_idx]
        outputs, hid_repr = model(inputs, ret_hid=True)
        loss = criterion(outputs, targets)
        regularization_loss = entropy_reg(hid_repr, targets)
        tot_regularization_loss = tot_regularization_loss + regularization_loss.item()
        total_loss_ = loss + args.beta * regularization_loss
        total_loss_.backward()
        total_loss += loss.item()
        _, predicted = torch.max(nn.Softmax(dim=1)(outputs).data, 1)
        total += targets.size(0)
        correct += predicted.eq(targets.data).sum().item()
        optimizer.step()  # expect: AG016
        watch.record()
    acc = 100. * correct / total
    return total_loss / (batch_idx + 1), acc, tot_regularization_loss / (batch_idx + 1)


epoch = 0
while epoch < args.epochs:
    epoch += 1
    loss, train_acc, regularization_loss = train(epoch)
    print('Epoch {}/{} | Loss {:3.4f} | acc {:3.2f} | reg_loss : {:3.4f}'.format(epoch, args.epochs, loss, train_acc, regularization_loss))
watch.report()
