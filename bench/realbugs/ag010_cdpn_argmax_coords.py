# source: https://github.com/LZGMatrix/BOP19_CDPN_2019ICCV/issues/4
# symptom: element 0 of tensors does not require grad and does not have a grad_fn
# The user wrote train.py from test.py: the coordinate-bin logits are turned into xyz coordinates with
# torch.argmax per axis, stacked, re-normalised to [-1, 1] and the loss is taken on those; backward fails.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Cfg:
    class network:
        coor_bin = 8


cfg = Cfg()


class CDPNRotHead(nn.Module):
    """Predicts, per pixel, a distribution over coor_bin + 1 bins for each of x, y and z (bin coor_bin = background)."""

    def __init__(self, in_ch=4, bins=cfg.network.coor_bin + 1):
        super().__init__()
        self.features = nn.Conv2d(in_ch, 16, 3, padding=1)
        self.coor_x = nn.Conv2d(16, bins, 1)
        self.coor_y = nn.Conv2d(16, bins, 1)
        self.coor_z = nn.Conv2d(16, bins, 1)

    def forward(self, img):
        f = torch.relu(self.features(img))
        return self.coor_x(f), self.coor_y(f), self.coor_z(f)


model = CDPNRotHead()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.randn(1, 4, 8, 8)
gt_coor = torch.rand(8, 8, 3) * 2 - 1

for it in range(2):
    optimizer.zero_grad()
    output_coor_x_, output_coor_y_, output_coor_z_ = model(images)
    output_coor_x_ = output_coor_x_.squeeze()
    output_coor_y_ = output_coor_y_.squeeze()
    output_coor_z_ = output_coor_z_.squeeze()
    # what test.py does to visualise the coordinates, reused for the loss
    output_coor_ = torch.stack([torch.argmax(output_coor_x_, axis=0),
                                torch.argmax(output_coor_y_, axis=0),
                                torch.argmax(output_coor_z_, axis=0)], axis=2)
    output_coor_[output_coor_ == cfg.network.coor_bin] = 0
    output_coor_ = 2.0 * output_coor_.float() / (cfg.network.coor_bin - 1.0) - 1.0
    loss = nn.functional.l1_loss(output_coor_, gt_coor)
    loss.backward()  # expect: AG010
    optimizer.step()
    print(it, loss.item())
