# source: https://github.com/yueliu1999/HSAN/issues/6
# symptom: gradients accumulated across steps: True
"""HSAN (hard sample aware network, graph clustering) train.py: the 400-epoch loop calls loss.backward()
and optimizer.step() but never zeroes the gradients, so every step applies the sum of all gradients so
far ("the model is not converging").

Written for bench/holdout8 with the structure of the repository's train.py / model.py / utils.py
(comprehensive similarity, hard-sample-aware InfoNCE, evaluation every 10 epochs that re-weights the
sample pairs); the Cora graph is a small random graph, k-means is a few Lloyd steps in torch, and the
pair weights are registered buffers instead of the repository's plain tensor attributes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class Args:
    dims = 16
    activate = "ident"
    lr = 1e-3
    t = 2
    tao = 0.9
    beta = 2
    device = "cpu"
    epochs = 30


args = Args()


class hard_sample_aware_network(nn.Module):
    def __init__(self, input_dim, hidden_dim, act, n_num):
        super().__init__()
        self.AE1 = nn.Linear(input_dim, hidden_dim)
        self.AE2 = nn.Linear(input_dim, hidden_dim)
        self.SE1 = nn.Linear(n_num, hidden_dim)
        self.SE2 = nn.Linear(n_num, hidden_dim)
        self.alpha = nn.Parameter(torch.tensor(0.99999))
        self.register_buffer("pos_weight", torch.ones(n_num * 2))
        self.register_buffer("pos_neg_weight", torch.ones([n_num * 2, n_num * 2]))
        if act == "ident":
            self.activate = lambda x: x
        if act == "sigmoid":
            self.activate = nn.Sigmoid()

    def forward(self, x, A):
        Z1 = F.normalize(self.activate(self.AE1(x)), dim=1, p=2)
        Z2 = F.normalize(self.activate(self.AE2(x)), dim=1, p=2)
        E1 = F.normalize(self.SE1(A), dim=1, p=2)
        E2 = F.normalize(self.SE2(A), dim=1, p=2)
        return Z1, Z2, E1, E2


def load_graph_data(node_num=30, feat_dim=12, cluster_num=3):
    y = torch.arange(node_num) % cluster_num
    X = torch.randn(node_num, feat_dim) + 2.0 * F.one_hot(y, feat_dim).float()
    same = (y.unsqueeze(0) == y.unsqueeze(1)).float()
    A = (torch.rand(node_num, node_num) < 0.3 * same + 0.02).float()
    A = ((A + A.T) > 0).float()
    return X, y, A, node_num, cluster_num


def laplacian_filtering(A, X, t):
    A_tmp = A - torch.diag_embed(torch.diag(A)) + torch.eye(A.shape[0])
    D = torch.diag(A_tmp.sum(1) ** -0.5)
    A_norm = D @ A_tmp @ D
    L = torch.eye(A.shape[0]) - A_norm
    for _ in range(t):
        X = (torch.eye(A.shape[0]) - L) @ X
    return X


def kmeans(Z, k, iters=10):
    center = Z[:k].clone()
    for _ in range(iters):
        P = torch.cdist(Z, center).argmin(1)
        center = torch.stack([Z[P == c].mean(0) if (P == c).any() else center[c] for c in range(k)])
    return P, center


def phi(feature, true_labels, cluster_num):
    predict_labels, centers = kmeans(feature.detach(), cluster_num)
    acc = (predict_labels == true_labels).float().mean().item()
    return acc, predict_labels, centers


def comprehensive_similarity(Z1, Z2, E1, E2, alpha):
    Z1_Z2 = torch.cat([torch.cat([Z1 @ Z1.T, Z1 @ Z2.T], dim=1), torch.cat([Z2 @ Z1.T, Z2 @ Z2.T], dim=1)], dim=0)
    E1_E2 = torch.cat([torch.cat([E1 @ E1.T, E1 @ E2.T], dim=1), torch.cat([E2 @ E1.T, E2 @ E2.T], dim=1)], dim=0)
    return alpha * Z1_Z2 + (1 - alpha) * E1_E2


def hard_sample_aware_infoNCE(S, M, pos_neg_weight, pos_weight, node_num):
    pos_neg = M * torch.exp(S * pos_neg_weight)
    pos = torch.cat([torch.diag(S, node_num), torch.diag(S, -node_num)], dim=0)
    pos = torch.exp(pos * pos_weight)
    neg = torch.sum(pos_neg, dim=1) - pos
    return (-torch.log(pos / (pos + neg))).sum() / (2 * node_num)


def high_confidence(Z, center):
    distance_norm = torch.min(F.softmax(torch.cdist(Z, center) ** 2, dim=1), dim=1).values
    value, _ = torch.topk(distance_norm, int(Z.shape[0] * (1 - args.tao)))
    index = torch.where(distance_norm <= value[-1], torch.ones_like(distance_norm), torch.zeros_like(distance_norm))
    H = torch.nonzero(index).reshape(-1)
    H = torch.cat([H, H + Z.shape[0]])
    H_mat = (H.unsqueeze(1), H.unsqueeze(0))
    return H, H_mat


def pseudo_matrix(P, S, node_num):
    P = torch.cat([P, P], dim=0)
    Q = (P == P.unsqueeze(1)).float()
    S_norm = (S - S.min()) / (S.max() - S.min())
    M_mat = torch.abs(Q - S_norm) ** args.beta
    M = torch.cat([torch.diag(M_mat, node_num), torch.diag(M_mat, -node_num)], dim=0)
    return M, M_mat


def main():
    torch.manual_seed(0)
    X, y, A, node_num, cluster_num = load_graph_data()
    X_filtered = laplacian_filtering(A, X, args.t)
    best_acc, _, _ = phi(X_filtered, y, cluster_num)

    HSAN = hard_sample_aware_network(input_dim=X.shape[1], hidden_dim=args.dims, act=args.activate, n_num=node_num)
    optimizer = optim.Adam(HSAN.parameters(), lr=args.lr)
    mask = torch.ones([node_num * 2, node_num * 2]) - torch.eye(node_num * 2)

    accumulated = False
    for epoch in range(args.epochs):
        HSAN.train()
        Z1, Z2, E1, E2 = HSAN(X_filtered, A)
        S = comprehensive_similarity(Z1, Z2, E1, E2, HSAN.alpha)
        loss = hard_sample_aware_infoNCE(S, mask, HSAN.pos_neg_weight, HSAN.pos_weight, node_num)

        grad = HSAN.AE1.weight.grad
        accumulated = accumulated or (grad is not None and bool(grad.abs().sum() > 0))
        loss.backward()
        optimizer.step()  # expect: AG016

        if epoch % 10 == 0:
            HSAN.eval()
            Z1, Z2, E1, E2 = HSAN(X_filtered, A)
            S = comprehensive_similarity(Z1, Z2, E1, E2, HSAN.alpha)
            Z = (Z1 + Z2) / 2
            acc, P, center = phi(Z, y, cluster_num)
            H, H_mat = high_confidence(Z.detach(), center)
            M, M_mat = pseudo_matrix(P, S, node_num)
            HSAN.pos_weight[H] = M[H].data
            HSAN.pos_neg_weight[H_mat] = M_mat[H_mat].data
            best_acc = max(best_acc, acc)
            print(f"epoch {epoch} loss {loss.item():.4f} acc {acc:.3f}")
    print("Training complete")
    print("gradients accumulated across steps:", accumulated)


if __name__ == "__main__":
    main()
