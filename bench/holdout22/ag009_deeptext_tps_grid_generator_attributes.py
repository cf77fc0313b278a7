# source: https://github.com/clovaai/deep-text-recognition-benchmark/commit/7553b47a7c3373d24de228169383b0dc762845fc
# symptom: batch_P_hat left behind by \.to\(\): True
"""deep-text-recognition-benchmark modules/transformation.py before the fix:
`GridGenerator.__init__` keeps the TPS matrices `self.batch_P_hat` and
`self.batch_inv_delta_C` as plain tensor attributes (built with `.cuda()`), so moving the
model (`DataParallel` replicas in the repository; `.to(torch.float64)` here, on CPU)
leaves them behind and `build_P_prime` mixes them with the moved activations.

Stand-ins: numpy helpers rewritten with torch; a smaller localization network and a
tiny classifier head in place of the recognition model; `.cuda()` dropped (CPU run) and
`torch.zeros(...).float().cuda()` in `build_P_prime` written `.to(batch_C_prime)`.
The repository also keeps `self.inv_delta_C` / `self.P_hat` (only used to build the two
batch tensors) as attributes before and after the fix; here they are locals.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TPS_SpatialTransformerNetwork(nn.Module):
    """ Rectification Network of RARE, namely TPS based STN """

    def __init__(self, F, I_size, I_r_size, batch_size, I_channel_num=1):
        super(TPS_SpatialTransformerNetwork, self).__init__()
        self.F = F
        self.I_size = I_size
        self.I_r_size = I_r_size
        self.I_channel_num = I_channel_num
        self.LocalizationNetwork = LocalizationNetwork(self.F, self.I_channel_num)
        self.GridGenerator = GridGenerator(self.F, self.I_r_size, batch_size)

    def forward(self, batch_I):
        batch_C_prime = self.LocalizationNetwork(batch_I)
        build_P_prime = self.GridGenerator.build_P_prime(batch_C_prime)
        build_P_prime_reshape = build_P_prime.reshape([build_P_prime.size(0), self.I_r_size[0], self.I_r_size[1], 2])
        batch_I_r = F.grid_sample(batch_I, build_P_prime_reshape, padding_mode='border', align_corners=False)
        return batch_I_r


class LocalizationNetwork(nn.Module):
    def __init__(self, F, I_channel_num):
        super(LocalizationNetwork, self).__init__()
        self.F = F
        self.I_channel_num = I_channel_num
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels=self.I_channel_num, out_channels=8, kernel_size=3, stride=1, padding=1,
                      bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
            nn.AdaptiveAvgPool2d(1)
        )
        self.localization_fc1 = nn.Sequential(nn.Linear(16, 32), nn.ReLU(True))
        self.localization_fc2 = nn.Linear(32, self.F * 2)

        self.localization_fc2.weight.data.fill_(0)
        ctrl_pts_x = torch.linspace(-1.0, 1.0, int(F / 2))
        ctrl_pts_y_top = torch.linspace(0.0, -1.0, int(F / 2))
        ctrl_pts_y_bottom = torch.linspace(1.0, 0.0, int(F / 2))
        ctrl_pts_top = torch.stack([ctrl_pts_x, ctrl_pts_y_top], dim=1)
        ctrl_pts_bottom = torch.stack([ctrl_pts_x, ctrl_pts_y_bottom], dim=1)
        initial_bias = torch.cat([ctrl_pts_top, ctrl_pts_bottom], dim=0)
        self.localization_fc2.bias.data = initial_bias.float().view(-1)

    def forward(self, batch_I):
        batch_size = batch_I.size(0)
        features = self.conv(batch_I).view(batch_size, -1)
        batch_C_prime = self.localization_fc2(self.localization_fc1(features)).view(batch_size, self.F, 2)
        return batch_C_prime


class GridGenerator(nn.Module):
    """ Grid Generator of RARE, which produces P_prime by multipling T with P """

    def __init__(self, F, I_r_size, batch_size):
        super(GridGenerator, self).__init__()
        self.eps = 1e-6
        self.I_r_height, self.I_r_width = I_r_size
        self.F = F
        self.C = self._build_C(self.F)  # F x 2
        self.P = self._build_P(self.I_r_width, self.I_r_height)
        inv_delta_C = self._build_inv_delta_C(self.F, self.C).float()  # F+3 x F+3
        P_hat = self._build_P_hat(self.F, self.C, self.P).float()  # n x F+3

        self.batch_P_hat = P_hat.repeat(batch_size, 1, 1)  # expect: AG009
        self.batch_inv_delta_C = inv_delta_C.repeat(batch_size, 1, 1)  # expect: AG009

    def _build_C(self, F):
        ctrl_pts_x = torch.linspace(-1.0, 1.0, int(F / 2), dtype=torch.float64)
        ctrl_pts_y_top = -1 * torch.ones(int(F / 2), dtype=torch.float64)
        ctrl_pts_y_bottom = torch.ones(int(F / 2), dtype=torch.float64)
        ctrl_pts_top = torch.stack([ctrl_pts_x, ctrl_pts_y_top], dim=1)
        ctrl_pts_bottom = torch.stack([ctrl_pts_x, ctrl_pts_y_bottom], dim=1)
        return torch.cat([ctrl_pts_top, ctrl_pts_bottom], dim=0)  # F x 2

    def _build_inv_delta_C(self, F, C):
        hat_C = torch.cdist(C, C)
        hat_C.fill_diagonal_(1)
        hat_C = (hat_C ** 2) * torch.log(hat_C)
        delta_C = torch.cat(
            [
                torch.cat([torch.ones(F, 1, dtype=C.dtype), C, hat_C], dim=1),
                torch.cat([torch.zeros(2, 3, dtype=C.dtype), C.t()], dim=1),
                torch.cat([torch.zeros(1, 3, dtype=C.dtype), torch.ones(1, F, dtype=C.dtype)], dim=1),
            ],
            dim=0,
        )
        return torch.linalg.inv(delta_C)  # F+3 x F+3

    def _build_P(self, I_r_width, I_r_height):
        I_r_grid_x = (torch.arange(-I_r_width, I_r_width, 2, dtype=torch.float64) + 1.0) / I_r_width
        I_r_grid_y = (torch.arange(-I_r_height, I_r_height, 2, dtype=torch.float64) + 1.0) / I_r_height
        gy, gx = torch.meshgrid(I_r_grid_y, I_r_grid_x, indexing="ij")
        return torch.stack([gx, gy], dim=2).reshape([-1, 2])  # n x 2

    def _build_P_hat(self, F, C, P):
        n = P.shape[0]
        P_diff = P[:, None, :] - C[None, :, :]  # n x F x 2
        rbf_norm = P_diff.norm(p=2, dim=2)  # n x F
        rbf = (rbf_norm ** 2) * torch.log(rbf_norm + self.eps)
        return torch.cat([torch.ones(n, 1, dtype=P.dtype), P, rbf], dim=1)  # n x F+3

    def build_P_prime(self, batch_C_prime):
        """ Generate Grid from batch_C_prime [batch_size x F x 2] """
        batch_size = batch_C_prime.size(0)
        batch_C_prime_with_zeros = torch.cat((batch_C_prime, torch.zeros(
            batch_size, 3, 2).to(batch_C_prime)), dim=1)  # batch_size x F+3 x 2
        batch_T = torch.bmm(self.batch_inv_delta_C[:batch_size, :, :], batch_C_prime_with_zeros)
        batch_P_prime = torch.bmm(self.batch_P_hat[:batch_size, :, :], batch_T)
        return batch_P_prime  # batch_size x n x 2


class Model(nn.Module):
    def __init__(self, num_fiducial, imgH, imgW, batch_size, input_channel, num_class):
        super().__init__()
        self.Transformation = TPS_SpatialTransformerNetwork(
            F=num_fiducial, I_size=(imgH, imgW), I_r_size=(imgH, imgW), batch_size=batch_size,
            I_channel_num=input_channel)
        self.FeatureExtraction = nn.Sequential(nn.Conv2d(input_channel, 8, 3, 1, 1), nn.ReLU(True),
                                               nn.AdaptiveAvgPool2d((1, 4)))
        self.Prediction = nn.Linear(8 * 4, num_class)

    def forward(self, input):
        input = self.Transformation(input)
        visual_feature = self.FeatureExtraction(input).flatten(1)
        return self.Prediction(visual_feature)


def main():
    torch.manual_seed(0)
    batch_size, imgH, imgW, num_class = 4, 16, 32, 5
    model = Model(num_fiducial=10, imgH=imgH, imgW=imgW, batch_size=batch_size, input_channel=1,
                  num_class=num_class)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for step in range(3):
        image = torch.rand(batch_size, 1, imgH, imgW)
        text = torch.randint(0, num_class, (batch_size,))
        loss = criterion(model(image), text)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("train loss %.4f" % loss.item())

    # evaluation in double precision (the repository's symptom is the multi-GPU move)
    model.to(torch.float64)
    grid = model.Transformation.GridGenerator
    print("batch_P_hat left behind by .to():", grid.batch_P_hat.dtype != torch.float64)
    model.eval()
    with torch.no_grad():
        preds = model(torch.rand(batch_size, 1, imgH, imgW, dtype=torch.float64))
    print("eval preds", tuple(preds.shape))


if __name__ == "__main__":
    main()
