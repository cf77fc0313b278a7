# source: https://github.com/locuslab/TCN/commit/0a93cfd4e89853c148792cee14f326c78d3e7ce4
# symptom: gradients carried over from the previous step: True
"""TCN copy-memory task: a temporal convolutional network trained to recall a short sequence after a long blank.

`train(ep)` runs forward, `loss.backward()` and `optimizer.step()` for every batch but never zeroes the
gradients, so each step applies the sum of all earlier batches' gradients. (The program logs `loss.item()`.)
"""
import time

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(1111)

batch_size, T, seq_len, n_train, n_test = 16, 20, 5, 128, 32
n_classes = 10
epochs, log_interval, clip = 2, 2, 1.0


def data_generator(T, mem_length, b_size):
    seq = torch.randint(1, 9, (b_size, mem_length))
    zeros = torch.zeros((b_size, T))
    marker = 9 * torch.ones((b_size, mem_length + 1))
    placeholders = torch.zeros((b_size, mem_length))
    x = torch.cat((seq.float(), zeros[:, :-1], marker), 1)
    y = torch.cat((placeholders, zeros, seq.float()), 1).long()
    return x, y


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super().__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
        super().__init__()
        self.conv1 = nn.Conv1d(n_inputs, n_outputs, kernel_size, stride=stride, padding=padding, dilation=dilation)
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)
        self.conv2 = nn.Conv1d(n_outputs, n_outputs, kernel_size, stride=stride, padding=padding, dilation=dilation)
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)
        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                 self.conv2, self.chomp2, self.relu2, self.dropout2)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class TemporalConvNet(nn.Module):
    def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
        super().__init__()
        layers = []
        for i in range(len(num_channels)):
            dilation_size = 2 ** i
            in_channels = num_inputs if i == 0 else num_channels[i - 1]
            layers += [TemporalBlock(in_channels, num_channels[i], kernel_size, stride=1, dilation=dilation_size,
                                     padding=(kernel_size - 1) * dilation_size, dropout=dropout)]
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


class TCN(nn.Module):
    def __init__(self, input_size, output_size, num_channels, kernel_size, dropout):
        super().__init__()
        self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size, dropout=dropout)
        self.linear = nn.Linear(num_channels[-1], output_size)

    def forward(self, x):
        y1 = self.tcn(x)
        return self.linear(y1.transpose(1, 2))


print("Preparing data...")
train_x, train_y = data_generator(T, seq_len, n_train)
test_x, test_y = data_generator(T, seq_len, n_test)

model = TCN(1, n_classes, [10] * 4, 8, dropout=0.0)
criterion = nn.CrossEntropyLoss()
optimizer = getattr(optim, "RMSprop")(model.parameters(), lr=5e-4)
carried_over = []


def train(ep):
    model.train()
    total_loss = 0
    start_time = time.time()
    correct = 0
    counter = 0
    for batch_idx, batch in enumerate(range(0, n_train, batch_size)):
        start_ind = batch
        end_ind = start_ind + batch_size

        x = train_x[start_ind:end_ind]
        y = train_y[start_ind:end_ind]

        out = model(x.unsqueeze(1).contiguous())
        loss = criterion(out.view(-1, n_classes), y.view(-1))
        pred = out.view(-1, n_classes).detach().max(1, keepdim=True)[1]
        correct += pred.eq(y.view_as(pred)).sum().item()
        counter += out.view(-1, n_classes).size(0)
        carried_over.append(any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in model.parameters()))
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        loss.backward()
        optimizer.step()  # expect: AG016
        total_loss += loss.item()

        if batch_idx > 0 and batch_idx % log_interval == 0:
            avg_loss = total_loss / log_interval
            elapsed = time.time() - start_time
            print('| Epoch {:3d} | {:5d}/{:5d} batches | ms/batch {:5.2f} | loss {:5.8f} | accuracy {:5.4f}'.format(
                ep, batch_idx, n_train // batch_size + 1, elapsed * 1000 / log_interval, avg_loss,
                100. * correct / counter))
            start_time = time.time()
            total_loss = 0
            correct = 0
            counter = 0


for ep in range(1, epochs + 1):
    train(ep)

print("gradients carried over from the previous step:", any(carried_over))
