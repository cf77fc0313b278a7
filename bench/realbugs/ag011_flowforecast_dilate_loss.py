# source: https://github.com/AIStream-Peelout/flow-forecast/issues/281
# symptom: UserWarning: torch\.range is deprecated
# flow-forecast's DilateLoss (the DILATE shape + temporal loss) builds the temporal penalty matrix with
# pairwise_distances(torch.range(1, N_output).view(N_output, 1)) on every call, so every training step warns.
import torch
import torch.nn as nn

torch.manual_seed(0)


def pairwise_distances(x, y=None):
    x_norm = (x ** 2).sum(1).view(-1, 1)
    if y is None:
        y = x
    y_norm = (y ** 2).sum(1).view(1, -1)
    dist = x_norm + y_norm - 2.0 * torch.mm(x, torch.transpose(y, 0, 1))
    return torch.clamp(dist, 0.0, float("inf"))


def soft_dtw(D, gamma):
    """Soft-DTW value of one cost matrix D (N x N), by the usual soft-min recursion."""
    N = D.shape[0]
    R = [[torch.tensor(float("inf"))] * (N + 1) for _ in range(N + 1)]
    R[0][0] = torch.tensor(0.0)
    for i in range(1, N + 1):
        for j in range(1, N + 1):
            prev = torch.stack([R[i - 1][j - 1], R[i - 1][j], R[i][j - 1]])
            R[i][j] = D[i - 1, j - 1] - gamma * torch.logsumexp(-prev / gamma, dim=0)
    return R[N][N]


def dilate_loss(outputs, targets, alpha, gamma, device):
    # outputs, targets: shape (batch_size, N_output, 1)
    batch_size, N_output = outputs.shape[0:2]
    loss_shape = 0
    path = 0
    for k in range(batch_size):
        Dk = pairwise_distances(targets[k, :, :].view(-1, 1), outputs[k, :, :].view(-1, 1))
        sdtw = soft_dtw(Dk, gamma)
        loss_shape = loss_shape + sdtw / batch_size
        path = path + torch.autograd.grad(sdtw, Dk, create_graph=True)[0] / batch_size
    Omega = pairwise_distances(torch.range(1, N_output).view(N_output, 1)).to(device)  # expect: AG011
    loss_temporal = torch.sum(path * Omega) / (N_output * N_output)
    return alpha * loss_shape + (1 - alpha) * loss_temporal


class DilateLoss(nn.Module):
    def __init__(self, gamma=0.001, alpha=0.5, device="cpu"):
        super().__init__()
        self.gamma = gamma
        self.alpha = alpha
        self.device = device

    def forward(self, targets, outputs):
        if len(targets.size()) < 3:
            targets = targets.unsqueeze(2)
        if len(outputs.size()) < 3:
            outputs = outputs.unsqueeze(2)
        return dilate_loss(targets, outputs, self.alpha, self.gamma, self.device)


model = nn.Linear(10, 5)
criterion = DilateLoss(gamma=0.01)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    history, future = torch.randn(3, 10), torch.randn(3, 5)
    optimizer.zero_grad()
    loss = criterion(future, model(history))
    loss.backward()
    optimizer.step()
    print(step, loss.item())
