# source: https://github.com/jostmey/NakedAttention/issues/1
# symptom: e_train keeps the graph of every batch: True
"""NakedAttention `model_and_script.py`: a per-sample self-attention model (K, Q, V as parameters) trained on
flattened images; the epoch's average loss is accumulated as `e_train += e_batch/len(loader_train)`, a tensor that
keeps every batch's graph alive until the epoch ends (the reporter ran out of RAM on Kaggle)."""
import torch


class SelfAttentionModel(torch.nn.Module):
    def __init__(self, num_inputs, num_channels, num_outputs):
        super().__init__()
        scale = num_inputs ** 0.5
        self.K = torch.nn.Parameter((2.0 * torch.rand(num_inputs, num_inputs) - 1.0) / scale)
        self.Q = torch.nn.Parameter((2.0 * torch.rand(num_inputs, num_inputs) - 1.0) / scale)
        self.V = torch.nn.Parameter((2.0 * torch.rand(num_inputs, num_inputs) - 1.0) / scale)
        self.softmax = torch.nn.Softmax(dim=1)
        self.out = torch.nn.Linear(num_inputs * num_channels, num_outputs)

    def forward(self, x):
        batch_size, num_inputs, num_channels = x.shape
        ys = []
        for i in range(batch_size):
            x_i = x[i]
            k = torch.matmul(self.K, x_i)
            q = torch.matmul(self.Q, x_i)
            v = torch.matmul(self.V, x_i)
            w = self.softmax(torch.matmul(q, k.T) / num_inputs ** 0.5)
            ys.append(torch.matmul(w, v))
        y = torch.stack(ys, dim=0)
        return self.out(y.reshape(batch_size, num_inputs * num_channels))


def accuracy(probs, labels):
    return (probs.argmax(dim=1) == labels).float().mean()


torch.manual_seed(0)
xs_train = torch.rand(64, 16, 1)
ys_train = torch.randint(0, 10, (64,))
xs_val = torch.rand(16, 16, 1)
ys_val = torch.randint(0, 10, (16,))

model = SelfAttentionModel(num_inputs=16, num_channels=1, num_outputs=10)
probability = torch.nn.Softmax(dim=1)
loss = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

dataset_train = torch.utils.data.TensorDataset(xs_train, ys_train)
sampler_train = torch.utils.data.RandomSampler(dataset_train, replacement=True)
loader_train = torch.utils.data.DataLoader(dataset_train, batch_size=16, sampler=sampler_train, drop_last=True)

e_better = 1.0e8
state_better = {}
kept_graph = False
for i in range(3):
    model.train()
    e_train = 0.0
    a_train = 0.0
    for xs_batch, ys_batch in iter(loader_train):
        ls_batch = model(xs_batch)
        ps_batch = probability(ls_batch)
        e_batch = loss(ls_batch, ys_batch)
        a_batch = accuracy(ps_batch, ys_batch)
        optimizer.zero_grad()
        e_batch.backward()
        optimizer.step()
        e_train += e_batch / len(loader_train)  # expect: AG015
        a_train += a_batch / len(loader_train)
    kept_graph = kept_graph or (torch.is_tensor(e_train) and e_train.grad_fn is not None)

    model.eval()
    with torch.no_grad():
        ls_val = model(xs_val)
        e_val = loss(ls_val, ys_val)
        a_val = accuracy(probability(ls_val), ys_val)
        if e_val < e_better:
            e_better = e_val
            state_better = {k: v.clone() for k, v in model.state_dict().items()}
    print("i:", i, "e_train: {:.5f}".format(float(e_train) / 0.693), "a_val: {:.1f}".format(100.0 * float(a_val)))

print("e_train keeps the graph of every batch:", kept_graph)
