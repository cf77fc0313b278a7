# source: https://github.com/RUCAIBox/RecBole/pull/307
# symptom: total_loss keeps the graph of every batch: True
"""RecBole `Trainer._train_epoch`, fixed as pull request #307 fixed it: the epoch total is summed from
`losses.item()`."""
from time import time

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Interaction(object):
    def __init__(self, interaction):
        self.interaction = interaction

    def __getitem__(self, key):
        return self.interaction[key]

    def to(self, device):
        return Interaction({k: v.to(device) for k, v in self.interaction.items()})


class BPRLoss(nn.Module):
    def __init__(self, gamma=1e-10):
        super(BPRLoss, self).__init__()
        self.gamma = gamma

    def forward(self, pos_score, neg_score):
        return -torch.log(self.gamma + torch.sigmoid(pos_score - neg_score)).mean()


class BPR(nn.Module):
    def __init__(self, n_users, n_items, embedding_size=16):
        super(BPR, self).__init__()
        self.user_embedding = nn.Embedding(n_users, embedding_size)
        self.item_embedding = nn.Embedding(n_items, embedding_size)
        self.loss = BPRLoss()

    def forward(self, user, item):
        return self.user_embedding(user), self.item_embedding(item)

    def calculate_loss(self, interaction):
        user, pos_item, neg_item = interaction['user_id'], interaction['item_id'], interaction['neg_item_id']
        user_e, pos_e = self.forward(user, pos_item)
        neg_e = self.item_embedding(neg_item)
        pos_item_score = torch.mul(user_e, pos_e).sum(dim=1)
        neg_item_score = torch.mul(user_e, neg_e).sum(dim=1)
        return self.loss(pos_item_score, neg_item_score)


class Trainer(object):
    def __init__(self, config, model):
        self.model = model
        self.learner = config['learner']
        self.learning_rate = config['learning_rate']
        self.epochs = config['epochs']
        self.device = config['device']
        self.start_epoch = 0
        self.train_loss_dict = dict()
        self.optimizer = self._build_optimizer()

    def _build_optimizer(self):
        if self.learner.lower() == 'adam':
            optimizer = optim.Adam(self.model.parameters(), lr=self.learning_rate)
        elif self.learner.lower() == 'sgd':
            optimizer = optim.SGD(self.model.parameters(), lr=self.learning_rate)
        else:
            optimizer = optim.Adam(self.model.parameters(), lr=self.learning_rate)
        return optimizer

    def _train_epoch(self, train_data, epoch_idx, loss_func=None):
        self.model.train()
        loss_func = loss_func or self.model.calculate_loss
        total_loss = None
        for batch_idx, interaction in enumerate(train_data):
            interaction = interaction.to(self.device)
            self.optimizer.zero_grad()
            losses = loss_func(interaction)
            loss = losses
            total_loss = losses.item() if total_loss is None else total_loss + losses.item()
            self._check_nan(loss)
            loss.backward()
            self.optimizer.step()
        return total_loss

    def _check_nan(self, loss):
        if torch.isnan(loss):
            raise ValueError('Training loss is nan')

    def _generate_train_loss_output(self, epoch_idx, s_time, e_time, losses):
        return 'epoch %d training [time: %.2fs, train loss: %.4f]' % (epoch_idx, e_time - s_time, losses)

    def fit(self, train_data):
        for epoch_idx in range(self.start_epoch, self.epochs):
            training_start_time = time()
            train_loss = self._train_epoch(train_data, epoch_idx)
            self.train_loss_dict[epoch_idx] = train_loss
            training_end_time = time()
            print(self._generate_train_loss_output(epoch_idx, training_start_time, training_end_time, train_loss))
        return self.train_loss_dict


n_users, n_items = 20, 50
train_data = [Interaction({'user_id': torch.randint(0, n_users, (32,)), 'item_id': torch.randint(0, n_items, (32,)),
                           'neg_item_id': torch.randint(0, n_items, (32,))}) for _ in range(5)]
config = {'learner': 'adam', 'learning_rate': 0.001, 'epochs': 3, 'device': torch.device('cpu')}
trainer = Trainer(config, BPR(n_users, n_items))
losses = trainer.fit(train_data)
last = losses[config['epochs'] - 1]
print(f"total_loss keeps the graph of every batch: {torch.is_tensor(last) and last.grad_fn is not None}")
