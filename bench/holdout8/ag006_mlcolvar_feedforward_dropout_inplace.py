# source: https://github.com/luigibonati/mlcolvar/issues/118
# symptom: one of the variables needed for gradient computation has been modified by an inplace operation.*output 0 of Relu
"""mlcolvar: DeepTDA with options={'nn': {'dropout': [...]}} fails in backward. FeedForward builds
Linear -> activation -> Dropout(inplace=True), and the in-place dropout overwrites the ReLU output that
ReluBackward0 saved.

Written for bench/holdout8 with the structure of mlcolvar's core/nn/feedforward.py, core/nn/utils.py and
the DeepTDA collective variable with its TDA loss (lightning replaced by a plain training loop).
"""
import torch


def get_activation(activation: str):
    if activation == "relu":
        return torch.nn.ReLU()
    if activation == "tanh":
        return torch.nn.Tanh()
    if activation == "elu":
        return torch.nn.ELU()
    if activation == "linear":
        return None
    raise ValueError(f"Unknown activation: {activation}")


def parse_nn_options(options, n_layers: int, last_layer_activation: bool):
    """Expand a scalar option into one entry per layer (the output layer gets None unless asked)."""
    if options is None or isinstance(options, (str, float, int, bool)) and not isinstance(options, list):
        if last_layer_activation:
            return [options] * n_layers
        return [options] * (n_layers - 1) + [None]
    if len(options) != n_layers:
        raise ValueError(f"Length of options: {options} should be equal to number of layers ({n_layers}).")
    return list(options)


class FeedForward(torch.nn.Module):
    """Feedforward network given the list of layers (activation -> dropout -> batchnorm)."""

    def __init__(self, layers, activation="relu", dropout=None, batchnorm=False, last_layer_activation=False):
        super().__init__()
        n_layers = len(layers) - 1
        activation_list = parse_nn_options(activation, n_layers, last_layer_activation)
        dropout_list = parse_nn_options(dropout, n_layers, last_layer_activation)
        batchnorm_list = parse_nn_options(batchnorm, n_layers, last_layer_activation)

        modules = []
        for i in range(len(layers) - 1):
            modules.append(torch.nn.Linear(layers[i], layers[i + 1]))
            activ, drop, norm = activation_list[i], dropout_list[i], batchnorm_list[i]
            if activ is not None:
                modules.append(get_activation(activ))
            if drop is not None:
                modules.append(torch.nn.Dropout(p=drop, inplace=True))  # expect: AG006
            if norm:
                modules.append(torch.nn.BatchNorm1d(layers[i + 1]))

        self.nn = torch.nn.Sequential(*modules)
        self.in_features = layers[0]
        self.out_features = layers[-1]

    def forward(self, x):
        return self.nn(x)


class TDALoss(torch.nn.Module):
    """Targeted discriminant analysis: each state's CV distribution pulled to a target Gaussian."""

    def __init__(self, n_states, target_centers, target_sigmas, alpha=1.0, beta=100.0):
        super().__init__()
        self.n_states = n_states
        self.target_centers = torch.as_tensor(target_centers, dtype=torch.float32)
        self.target_sigmas = torch.as_tensor(target_sigmas, dtype=torch.float32)
        self.alpha = alpha
        self.beta = beta

    def forward(self, H, labels):
        loss_centers = torch.zeros_like(self.target_centers)
        loss_sigmas = torch.zeros_like(self.target_sigmas)
        for i in range(self.n_states):
            H_red = H[labels == i]
            mu = torch.mean(H_red, 0)
            sigma = torch.std(H_red, 0)
            loss_centers[i] = self.alpha * (mu - self.target_centers[i]).pow(2).sum()
            loss_sigmas[i] = self.beta * (sigma - self.target_sigmas[i]).pow(2).sum()
        return loss_centers.sum() + loss_sigmas.sum()


class DeepTDA(torch.nn.Module):
    BLOCKS = ["norm_in", "nn"]

    def __init__(self, n_states, n_cvs, target_centers, target_sigmas, layers, options=None):
        super().__init__()
        options = options or {}
        self.n_states = n_states
        self.n_cvs = n_cvs
        self.norm_in = torch.nn.Identity()
        self.nn = FeedForward(layers, **options.get("nn", {}))
        self.loss_fn = TDALoss(n_states, target_centers, target_sigmas)

    def forward(self, x):
        return self.nn(self.norm_in(x))

    def training_step(self, batch):
        x, labels = batch
        z = self.forward(x)
        return self.loss_fn(z, labels)


def make_dataset(n_per_state=64, n_features=4):
    a = torch.randn(n_per_state, n_features) * 0.3 - 1.0
    b = torch.randn(n_per_state, n_features) * 0.3 + 1.0
    x = torch.cat([a, b])
    labels = torch.cat([torch.zeros(n_per_state), torch.ones(n_per_state)]).long()
    return x, labels


def fit(model, dataset, epochs=5, batch_size=32):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, labels = dataset
    for epoch in range(epochs):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), batch_size):
            idx = perm[start:start + batch_size]
            optimizer.zero_grad()
            loss = model.training_step((x[idx], labels[idx]))
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


def main():
    torch.manual_seed(0)
    n_states = 2
    target_centers = [[-7.0], [7.0]]
    target_sigmas = [[0.2], [0.2]]
    nn_layers = [4, 16, 16, 1]
    model = DeepTDA(n_states=n_states, n_cvs=1, target_centers=target_centers, target_sigmas=target_sigmas,
                    layers=nn_layers, options={"nn": {"dropout": [0.2, 0.4, 0.6]}})
    fit(model, make_dataset())


if __name__ == "__main__":
    main()
