# source: https://github.com/IceLab-X/MiniGP/issues/13
# symptom: Trying to backward through the graph a second time
# stgp_demo.py's SE_kernel.__init__ stores self.length_scale = torch.exp(nn.Parameter(log(...))): a tensor composed once
# from a parameter, then used by forward() in every epoch of train_stgp. The second epoch's backward fails.
import torch
import torch.nn as nn

JITTER = 1e-1


def kronecker(A, B):
    AB = torch.einsum("ab,cd->acbd", A, B)
    return AB.reshape(A.size(0) * B.size(0), A.size(1) * B.size(1))


class SE_kernel(nn.Module):
    def __init__(self, length_scale=1.0):
        super().__init__()
        self.length_scale = torch.exp(nn.Parameter(torch.log(torch.tensor(length_scale))))

    def forward(self, X, X2):
        X = X / self.length_scale.expand(X.size(0), X.size(1))  # expect: AG002
        X2 = X2 / self.length_scale.expand(X2.size(0), X2.size(1))  # expect: AG002
        X_norm2 = torch.sum(X * X, dim=1).view(-1, 1)
        X2_norm2 = torch.sum(X2 * X2, dim=1).view(-1, 1)
        K = -2.0 * X @ X2.t() + X_norm2.expand(X.size(0), X2.size(0)) + X2_norm2.t().expand(X.size(0), X2.size(0))
        return torch.exp(-K)


class stgp(nn.Module):
    def __init__(self, latlong_length_scale=4.0, elevation_length_scale=3.0, time_length_scale=0.25,
                 noise_variance=0.1, signal_variance=1.0):
        super().__init__()
        self.log_noise_variance = nn.Parameter(torch.log(torch.tensor(noise_variance)))
        self.log_signal_variance = nn.Parameter(torch.log(torch.tensor(signal_variance)))
        self.latlong_kernel = SE_kernel(latlong_length_scale)
        self.elevation_kernel = SE_kernel(elevation_length_scale)
        self.temporal_kernel = SE_kernel(time_length_scale)

    def negative_log_likelihood(self, space_coordinates, time_coordinates, stData):
        latlong_K = self.latlong_kernel(space_coordinates[:, 0:2], space_coordinates[:, 0:2])
        elevation_K = self.elevation_kernel(space_coordinates[:, 2:3], space_coordinates[:, 2:3])
        spatial_K = latlong_K * elevation_K + torch.eye(latlong_K.size(0)) * JITTER
        temporal_K = self.temporal_kernel(time_coordinates, time_coordinates) + torch.eye(time_coordinates.size(0)) * JITTER
        eigen_value_s, eigen_vector_s = torch.linalg.eigh(spatial_K)
        eigen_value_t, eigen_vector_t = torch.linalg.eigh(temporal_K)
        eigen_vector_st = kronecker(eigen_vector_t, eigen_vector_s)
        eigen_value_st = kronecker(eigen_value_t.view(-1, 1), eigen_value_s.view(-1, 1)).view(-1)
        inv = 1.0 / (eigen_value_st + torch.exp(self.log_noise_variance))
        sigma_inverse = eigen_vector_st @ inv.diag_embed() @ eigen_vector_st.transpose(-2, -1)
        alpha = sigma_inverse @ stData.transpose(-2, -1).reshape(-1, 1)
        nll = 0.5 * (eigen_value_st + torch.exp(self.log_noise_variance)).log().sum()
        nll = nll + 0.5 * (stData.transpose(-2, -1).reshape(1, -1) @ alpha).sum()
        return nll


def train_stgp(model, train_space_coordinates, train_time_coordinates, train_stData, lr=0.1, epochs=5):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for i in range(epochs):
        optimizer.zero_grad()
        loss = model.negative_log_likelihood(train_space_coordinates, train_time_coordinates, train_stData)
        loss.backward()
        optimizer.step()
        print("Epoch: {}, Loss: {}".format(i, loss.item()))


if __name__ == "__main__":
    torch.manual_seed(0)
    space = torch.rand(6, 3) * 10
    time = torch.linspace(0, 1, 4).view(-1, 1)
    pm25 = torch.randn(6, 4)
    model = stgp()
    train_stgp(model, space, time, pm25, lr=0.1, epochs=5)
