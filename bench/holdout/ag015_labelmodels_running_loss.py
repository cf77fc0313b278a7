# source: https://github.com/BatsResearch/labelmodels/issues/4
# symptom: running_loss still has a graph: True
# labelmodels/label_model.py's _do_estimate sums the batch losses for the epoch log with running_loss += loss:
# "You're holding on to the graph for each batch per epoch" until the GPU runs out; fix: running_loss += loss.item().
import torch
import torch.nn as nn


class LearningConfig:
    def __init__(self):
        self.epochs = 2
        self.batch_size = 4
        self.step_size = 0.01
        self.step_schedule = None
        self.momentum = 0.9


class LabelModel(nn.Module):
    def __init__(self, num_classes=2, num_lfs=3, init_acc=0.9, acc_prior=0.025):
        super().__init__()
        self.num_classes = num_classes
        self.acc_prior = acc_prior
        self.accuracy = nn.Parameter(torch.full((num_lfs,), init_acc))
        self.class_balance = nn.Parameter(torch.zeros(num_classes))

    def _get_regularization_loss(self):
        return self.acc_prior * torch.norm(self.accuracy - 0.7)

    def forward(self, votes):
        class_ll = torch.log_softmax(self.class_balance, dim=0)
        agree = (votes[:, :, None] == torch.arange(1, self.num_classes + 1)).float()
        return torch.logsumexp(class_ll + (agree * self.accuracy[None, :, None]).sum(1), dim=1)

    def _do_estimate(self, batches, config):
        optimizer = torch.optim.SGD(self.parameters(), lr=config.step_size, momentum=config.momentum)
        self.train()
        for epoch in range(config.epochs):
            running_loss = 0.0
            for i_batch, inputs in enumerate(batches):
                optimizer.zero_grad()
                log_likelihood = self(*inputs)
                loss = -1 * torch.mean(log_likelihood)
                loss += self._get_regularization_loss()
                loss.backward()
                optimizer.step()
                running_loss += loss  # expect: AG015
            epoch_loss = running_loss / len(batches)
            print(f"Epoch {epoch + 1} loss: {float(epoch_loss):.4f}")
        print("running_loss still has a graph:", getattr(running_loss, "grad_fn", None) is not None)


torch.manual_seed(0)
votes = torch.randint(0, 3, (12, 3))
LabelModel()._do_estimate([(votes[i:i + 4],) for i in range(0, 12, 4)], LearningConfig())
