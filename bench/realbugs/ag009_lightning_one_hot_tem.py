# source: https://github.com/Lightning-AI/pytorch-lightning/issues/3674
# symptom: self\.tem is on cpu, layer_1 on (meta|cuda)
# The LitModel's __init__ stores self.tem = self.one_hot(self.seg, self.num_joints) (then .permute) as a plain tensor;
# the trainer moves the module to the GPU but forward() prints self.tem.device == cpu. Trainer stand-in in lit_lib/.
import torch
import torch.nn.functional as F

from lit_lib.trainer import Trainer


class LitModel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seg = 20
        self.num_joints = 25
        self.tem = self.one_hot(self.seg, self.num_joints)  # expect: AG009
        self.tem = self.tem.permute(2, 0, 1)  # expect: AG009
        self.layer_1 = torch.nn.Linear(28 * 28, 128)
        self.layer_2 = torch.nn.Linear(128, 10)

    def one_hot(self, spa, tem) -> torch.Tensor:
        y = torch.arange(spa).unsqueeze(-1)
        y_onehot = torch.FloatTensor(spa, spa)
        y_onehot.zero_()
        y_onehot.scatter_(1, y, 1)
        y_onehot = y_onehot.unsqueeze(0)
        y_onehot = y_onehot.repeat(tem, 1, 1)
        return y_onehot

    def forward(self, x):
        print(f"self.tem is on {self.tem.device}, layer_1 on {self.layer_1.weight.device}")
        x = x.view(x.size(0), -1)
        x = self.layer_1(x)
        x = F.relu(x)
        x = self.layer_2(x)
        return x + self.tem[:10, 0, 0]

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


torch.manual_seed(0)
batches = [(torch.rand(8, 1, 28, 28), torch.randint(0, 10, (8,))) for _ in range(2)]
Trainer(max_steps=2).fit(LitModel(), batches)
