# source: https://github.com/benedekrozemberczki/SimGNN/issues/41
# symptom: graph kept after backward: True
# Clean twin: process_batch() calls losses.backward() without retain_graph, as the question implies.
import torch
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


class SimGNN(torch.nn.Module):
    def __init__(self, number_of_labels, filters=8, bins=4):
        super().__init__()
        self.convolution_1 = torch.nn.Linear(number_of_labels, filters)
        self.attention = torch.nn.Linear(filters, filters)
        self.fully_connected = torch.nn.Linear(2 * filters, bins)
        self.scoring_layer = torch.nn.Linear(bins, 1)

    def embed(self, features, adjacency):
        h = torch.relu(self.convolution_1(adjacency @ features))
        context = torch.tanh(self.attention(h.mean(0)))
        return (torch.sigmoid(h @ context).unsqueeze(1) * h).sum(0)

    def forward(self, data):
        e1 = self.embed(data["features_1"], data["edge_index_1"])
        e2 = self.embed(data["features_2"], data["edge_index_2"])
        scores = torch.relu(self.fully_connected(torch.cat([e1, e2])))
        return torch.sigmoid(self.scoring_layer(scores))


class SimGNNTrainer:
    def __init__(self, number_of_labels=5):
        self.model = SimGNN(number_of_labels)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.001)

    def transfer_to_torch(self, pair):
        return pair

    def process_batch(self, batch):
        self.optimizer.zero_grad()
        losses = 0
        for graph_pair in batch:
            data = self.transfer_to_torch(graph_pair)
            target = data["target"]
            prediction = self.model(data)
            losses = losses + F.mse_loss(data["target"], prediction.view(-1))
        losses.backward()
        self.optimizer.step()
        self.last_graph_kept = graph_kept(losses)
        loss = losses.item()
        return loss

    def fit(self, batches, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            loss_sum = 0
            for index, batch in enumerate(batches):
                loss_score = self.process_batch(batch)
                loss_sum = loss_sum + loss_score
            print(f"epoch {epoch}: loss {loss_sum / len(batches):.4f}")
        print("graph kept after backward:", self.last_graph_kept)


def random_pair(n=5, labels=5):
    adj = (torch.rand(n, n) > 0.5).float()
    return {"features_1": torch.rand(n, labels), "edge_index_1": adj, "features_2": torch.rand(n, labels),
            "edge_index_2": adj.t(), "target": torch.rand(1)}


torch.manual_seed(0)
trainer = SimGNNTrainer()
trainer.fit([[random_pair() for _ in range(3)] for _ in range(2)])
