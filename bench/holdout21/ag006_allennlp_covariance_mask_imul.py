# source: https://github.com/allenai/allennlp/commit/4b6f8d165115997c2319918f956fd1e38f40d583
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation
"""allenai/allennlp allennlp/training/metrics/covariance.py before #1691: Covariance.__call__
unwraps its inputs with `x.detach().cpu()` (the same storage and version counter on CPU) and
then masks them in place, `predictions *= mask` and `gold_labels *= mask`; a regression model
that updates the metric in forward() after computing its loss fails in the trainer's
`loss.backward()`."""
from typing import Optional

import torch


class Metric:
    @staticmethod
    def unwrap_to_tensors(*tensors):
        """If you passed gradient-tracking Tensors to a Metric, there will be a memory leak;
        use the tensors directly, on the CPU."""
        return (x.detach().cpu() if isinstance(x, torch.Tensor) else x for x in tensors)


class Covariance(Metric):
    def __init__(self):
        self._total_prediction_mean = 0.0
        self._total_label_mean = 0.0
        self._total_co_moment = 0.0
        self._total_count = 0.0

    def __call__(self, predictions, gold_labels, mask: Optional[torch.Tensor] = None):
        predictions, gold_labels, mask = self.unwrap_to_tensors(predictions, gold_labels, mask)
        predictions = predictions.view(-1)
        gold_labels = gold_labels.view(-1)
        if mask is not None:
            mask = mask.view(-1)
            predictions *= mask  # expect: AG006
            gold_labels *= mask  # expect: AG006
            num_batch_items = torch.sum(mask).item()
        else:
            num_batch_items = gold_labels.numel()
        previous_count = self._total_count
        updated_count = self._total_count + num_batch_items
        batch_mean_prediction = torch.sum(predictions) / num_batch_items
        delta_mean_prediction = ((batch_mean_prediction - self._total_prediction_mean) * num_batch_items) / updated_count
        previous_total_prediction_mean = self._total_prediction_mean
        self._total_prediction_mean += delta_mean_prediction.item()
        batch_mean_label = torch.sum(gold_labels) / num_batch_items
        delta_mean_label = ((batch_mean_label - self._total_label_mean) * num_batch_items) / updated_count
        previous_total_label_mean = self._total_label_mean
        self._total_label_mean += delta_mean_label.item()
        batch_coresiduals = (predictions - batch_mean_prediction) * (gold_labels - batch_mean_label)
        if mask is not None:
            batch_co_moment = torch.sum(batch_coresiduals * mask)
        else:
            batch_co_moment = torch.sum(batch_coresiduals)
        delta_co_moment = (batch_co_moment + (previous_total_prediction_mean - batch_mean_prediction) *
                           (previous_total_label_mean - batch_mean_label) *
                           (previous_count * num_batch_items / updated_count))
        self._total_co_moment += delta_co_moment.item()
        self._total_count = updated_count

    def get_metric(self, reset=False):
        covariance = self._total_co_moment / (self._total_count - 1)
        if reset:
            self.reset()
        return covariance

    def reset(self):
        self.__init__()


class SelectiveRegressor(torch.nn.Module):
    """a token-level regressor over masked sequences, as in the report's selective regressor"""

    def __init__(self, vocab, dim):
        super().__init__()
        self.embedder = torch.nn.Embedding(vocab, dim)
        self.encoder = torch.nn.GRU(dim, dim, batch_first=True)
        self.projection = torch.nn.Linear(dim, 1)
        self.covariance = Covariance()

    def forward(self, tokens, mask, label):
        encoded, _ = self.encoder(self.embedder(tokens))
        predictions = self.projection(encoded).squeeze(-1)
        loss = torch.nn.functional.mse_loss(predictions, label)
        self.covariance(predictions, label, mask)
        return {'loss': loss, 'predictions': predictions}


def train_epoch(model, optimizer, batches):
    model.train()
    for tokens, mask, label in batches:
        optimizer.zero_grad()
        output_dict = model(tokens, mask, label)
        loss = output_dict['loss']
        loss.backward()
        optimizer.step()
    return model.covariance.get_metric(reset=True), loss.item()


def main():
    torch.manual_seed(0)
    batches = []
    for _ in range(3):
        tokens = torch.randint(0, 20, (4, 7))
        mask = (torch.rand(4, 7) > 0.2).float()
        label = torch.randn(4, 7)
        batches.append((tokens, mask, label))
    model = SelectiveRegressor(20, 8)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    print('covariance, loss', train_epoch(model, optimizer, batches))


if __name__ == '__main__':
    main()
