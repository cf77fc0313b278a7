# source: https://github.com/dillondavis/RecurrentAttentionConvolutionalNeuralNetwork/issues/4
# symptom: grad can be implicitly created only for scalar outputs
# RA-CNN's Manager.do_batch calls self.criterion_rank(scores[i-1], scores[i], label).backward(...): RankLoss returns one
# value per sample, so any batch_size > 1 fails. Re-created with the Manager class; RankLoss and the model live in racnn_lib/.
import torch
import torch.nn as nn

from racnn_lib.losses import RankLoss
from racnn_lib.model import TwoScaleNet


class Manager:
    def __init__(self, model, batch_size):
        self.model = model
        self.batch_size = batch_size
        self.criterion_class = nn.CrossEntropyLoss()
        self.criterion_rank = RankLoss()

    def do_batch(self, optimizer, batch, label, optimize_class=True):
        self.model.zero_grad()
        scores = self.model(batch)
        if optimize_class:
            loss = sum(self.criterion_class(s, label) for s in scores)
            loss.backward()
        else:
            for i in range(1, len(scores)):
                retain_graph = i < len(scores) - 1
                self.criterion_rank(scores[i - 1], scores[i], label).backward(retain_graph=retain_graph)  # expect: AG005
        optimizer.step()

    def do_epoch(self, epoch_idx, optimizer, data, optimize_class=True):
        for batch, label in data:
            self.do_batch(optimizer, batch, label, optimize_class=optimize_class)
        print("epoch", epoch_idx, "done")

    def train(self, epochs, optimizer, data):
        for epoch_idx in range(epochs):
            self.do_epoch(epoch_idx, optimizer, data, optimize_class=True)
            self.do_epoch(epoch_idx, optimizer, data, optimize_class=False)


torch.manual_seed(0)
batch_size = 32
data = [(torch.randn(batch_size, 3, 16, 16), torch.randint(0, 5, (batch_size,))) for _ in range(2)]
model = TwoScaleNet()
manager = Manager(model, batch_size)
manager.train(2, torch.optim.SGD(model.parameters(), lr=0.01), data)
